-- ANALYZE's count of the rows of `home`, the table a tenant's memories are in
-- (memory_home()), -1 before its first ANALYZE: the search's corpus size when it is not
-- filtered, and the rows in the HNSW graph its vector side walks. A function, so that the
-- search statement itself reads no catalog (docs/scale-out.md, "Two crashes").
CREATE OR REPLACE FUNCTION public.memory_home_rows(home regclass)
 RETURNS real
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
    SELECT c.reltuples FROM pg_class c WHERE c.oid = home
$function$;
