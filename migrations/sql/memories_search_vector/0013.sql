-- What the keyword side reads: A = content, B = category, C = tags, D = the context and
-- the words inside camelCase identifiers (checkRateLimit -> check rate limit), so that
-- "rate limit" finds them too while the whole identifier stays one A lexeme.
CREATE OR REPLACE FUNCTION public.memories_search_vector(
    content text, category text, tags text[], context text)
RETURNS tsvector LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN setweight(to_tsvector('english'::regconfig, coalesce(content, '')), 'A')
    || setweight(to_tsvector('english'::regconfig, coalesce(category, '')), 'B')
    || setweight(to_tsvector('english'::regconfig,
                             coalesce(array_to_string(tags, ' '), '')), 'C')
    || setweight(to_tsvector('english'::regconfig, coalesce(context, '')), 'D')
    || setweight(to_tsvector('english'::regconfig, coalesce((
           SELECT string_agg(regexp_replace(w[1], '([a-z0-9])([A-Z])', '\1 \2', 'g'), ' ')
           FROM regexp_matches(content, '([A-Za-z0-9]*[a-z0-9][A-Z][A-Za-z0-9]*)', 'g') AS w
       ), '')), 'D');
