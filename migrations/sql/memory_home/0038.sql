-- The table a tenant's memories are in: memories on one PostgreSQL; on a Citus node, the
-- tenant's shard of it, where the search statement runs (memory_search_on_worker()). The
-- search's readers and its corpus size read this table, its indexes and its statistics:
-- the distributed table has no statistics, and a read through it from a statement on a
-- shard is a distributed query nested in another, which Citus refuses whenever it does not
-- run it locally (under EXPLAIN ANALYZE, or auto_explain's log_analyze).
CREATE OR REPLACE FUNCTION public.memory_home(tenant text)
 RETURNS regclass
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') THEN
        RETURN shard_name('public.memories',
                          get_shard_id_for_distribution_column('public.memories', tenant));
    END IF;
    RETURN 'public.memories'::regclass;
END
$function$;
