// A real OpenID provider for the console sign-in tests (tests/oidc/test_oidc_sign_in.py):
// the certified `oidc-provider` from npm (scripts/oidc-provider installs it), with its
// development login and consent pages (any password; the login names the account).
// Usage: node provider.mjs CACHE PORT CONFIG_JSON (CACHE: the directory scripts/oidc-provider
// prints, holding node_modules), CONFIG_JSON holding
//   {"client_id", "client_secret", "redirect_uri", "host" (optional), "accounts": {"alice": {"email": ...,
//    "email_verified": true}}}.
// Prints "listening" once it accepts connections.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [cache, port, configJson] = process.argv.slice(2);
const entry = join(cache, "node_modules", "oidc-provider", "lib", "index.js");
const { default: Provider } = await import(pathToFileURL(entry).href);
const config = JSON.parse(configJson);
// "localhost" unless the config names another loopback name (a browser test puts the
// provider on another site than the server's).
const issuer = `http://${config.host ?? "localhost"}:${port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: config.client_id,
      client_secret: config.client_secret,
      redirect_uris: [config.redirect_uri],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
    },
  ],
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => true },
  async findAccount(ctx, id) {
    const account = config.accounts[id];
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        return { sub: id, name: id, ...account };
      },
    };
  },
});

provider.listen(Number(port), "127.0.0.1", () => {
  console.log("listening");
});
