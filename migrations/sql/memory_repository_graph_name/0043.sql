-- The name of a repository's own HNSW graph (memory_repository_graph()): from a digest of
-- the tenant and the repository, so that any name fits, and the same everywhere it is
-- asked (the service's builder, the search on one PostgreSQL or on a Citus worker).
CREATE OR REPLACE FUNCTION public.memory_repository_graph_name(tenant text, repo text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
    SELECT 'memories_graph_' || left(md5(tenant || chr(31) || repo), 24)
$function$;
