CREATE OR REPLACE FUNCTION public.memory_vector_fits(model text)
 RETURNS boolean
 LANGUAGE sql
 STABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
            SELECT model IS NULL
                OR coalesce((SELECT e.name = model FROM embedding_model e), true)
        $function$;
