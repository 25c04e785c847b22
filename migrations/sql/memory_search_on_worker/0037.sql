-- A search statement run on the worker that holds the tenant's shards, planned there once
-- per connection. Citus plans a statement it routes by a value for that value every time,
-- on the coordinator and again on the worker (the shard's copy comes as text, the values
-- written in): 10 of a search's 17 ms at 10,000 memories (docs/scale-out.md). This
-- function is distributed, co-located with memories by `tenant`, and called as its own
-- statement, so Citus runs the call on the tenant's worker and plans only the call. There
-- the statement (the tables named `{memories}` and `{memory_access}` in its text) is
-- PREPAREd against the tenant's shards under a name made of its text's hash and the
-- shard, once per connection, and EXECUTEd as a generic plan with `args`, each a literal
-- of its parameter's type. Its answer is the statement's one value (jsonb); with `explain`,
-- the lines of EXPLAIN (ANALYZE, BUFFERS) of that execution instead.
-- Invoker rights: the statement runs as the caller, row-level security applies on the
-- shards as on the tables, and only the transaction's own tenant (app.tenant_id) is
-- served. A connection keeps at most 32 such statements: the oldest is let go first.
-- A tenant moved to another shard gets a statement of the new shard's name; one moved to
-- another worker is prepared there. A call that reaches a worker which no longer holds the
-- tenant's shard (routed there just before a move committed) is refused as a
-- serialization failure, to be retried: the shard's old copy stays on that worker until
-- Citus drops it, and the reads the search counts there would be lost with it.
CREATE OR REPLACE FUNCTION public.memory_search_on_worker(tenant text, statement text, args text[], explain boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 SET search_path TO 'pg_catalog', 'public'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
    shard bigint;
    prepared text;
    stale text;
    plan_line text;
    types regtype[];
    execution text;
    arglist text;
    answer jsonb;
BEGIN
    IF tenant IS DISTINCT FROM current_setting('app.tenant_id', true) THEN
        RAISE EXCEPTION 'a search runs for the transaction''s own tenant only'
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    shard := get_shard_id_for_distribution_column('public.memories', tenant);
    IF NOT EXISTS (SELECT 1 FROM pg_dist_placement p
                   WHERE p.shardid = shard
                     AND p.groupid = (SELECT g.groupid FROM pg_dist_local_group g)) THEN
        RAISE EXCEPTION 'the tenant''s shard % is no longer on this node', shard
            USING ERRCODE = 'serialization_failure',
                  HINT = 'It moved to another worker while the call was on its way; retry.';
    END IF;
    prepared := format('memory_search_%s_%s', md5(statement), shard);
    SELECT p.parameter_types INTO types FROM pg_prepared_statements p WHERE p.name = prepared;
    IF NOT FOUND THEN
        FOR stale IN SELECT p.name FROM pg_prepared_statements p
                     WHERE p.name LIKE 'memory\_search\_%'
                     ORDER BY p.prepare_time DESC OFFSET 31 LOOP
            EXECUTE format('DEALLOCATE %I', stale);
        END LOOP;
        EXECUTE format('PREPARE %I AS %s', prepared,
            replace(replace(statement,
                '{memories}', shard_name('public.memories', shard)),
                '{memory_access}', shard_name('public.memory_access',
                    get_shard_id_for_distribution_column('public.memory_access', tenant))));
        SELECT p.parameter_types INTO types FROM pg_prepared_statements p
        WHERE p.name = prepared;
    END IF;
    IF cardinality(args) IS DISTINCT FROM cardinality(types) THEN
        RAISE EXCEPTION 'the statement takes % values, % were given',
            cardinality(types), cardinality(args);
    END IF;
    SELECT string_agg(quote_nullable(a.value) || '::' || t.type::text, ', ' ORDER BY a.n)
    INTO arglist
    FROM unnest(args) WITH ORDINALITY AS a(value, n)
    JOIN unnest(types) WITH ORDINALITY AS t(type, n) USING (n);
    execution := format('EXECUTE %I', prepared) || coalesce('(' || arglist || ')', '');
    IF explain THEN
        answer := '[]'::jsonb;
        FOR plan_line IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS) ' || execution LOOP
            answer := answer || to_jsonb(plan_line);
        END LOOP;
    ELSE
        EXECUTE execution INTO answer;
    END IF;
    RETURN answer;
END
$function$
