-- Whether a repository has an HNSW graph of its own, ready to read: a partial index of the
-- table the tenant's rows are in (`home`: memories, or on a Citus worker the tenant's
-- shard, whose copy of an index Citus names with the shard's number), named by
-- memory_repository_graph_name() and built by `agent-memory graphs` (app/services/graphs.py)
-- WHERE tenant_id = <tenant> AND source_repo = <repo>. Only memory_vector_candidates()'s
-- choice of a branch rests on it: which index a statement reads is the planner's, which
-- takes a partial index only where the statement's own condition implies its predicate.
CREATE OR REPLACE FUNCTION public.memory_repository_graph(tenant text, repo text, home regclass)
 RETURNS boolean
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
    SELECT EXISTS (
        SELECT 1
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_index i ON i.indexrelid = c.oid
        WHERE c.relname = public.memory_repository_graph_name(tenant, repo)
                          || coalesce(substring(home::text FROM '_[0-9]+$'), '')
          AND c.relnamespace = 'public'::regnamespace
          AND i.indrelid = home
          AND i.indisvalid AND i.indisready)
$function$;
