CREATE OR REPLACE FUNCTION public.memory_vector_if_fits(v vector, model text)
 RETURNS vector
 LANGUAGE sql
 STABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'public'
AS $function$ SELECT CASE WHEN memory_vector_fits(model) THEN v END $function$;
