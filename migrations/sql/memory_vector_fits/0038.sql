-- Whether vectors made by `model` compare with the stored ones (migration 0019: a server
-- left on the model a re-embed replaced searches by keyword alone). NULL: not asked (the
-- search a Citus worker runs: embedding_model is the coordinator's table, and re-embedding
-- is for one PostgreSQL). plpgsql, so that the table is read only when asked: the body of
-- a SQL function is planned whole, and on a worker the plan alone failed.
CREATE OR REPLACE FUNCTION public.memory_vector_fits(model text)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
BEGIN
    IF model IS NULL THEN
        RETURN true;
    END IF;
    RETURN coalesce((SELECT e.name = model FROM embedding_model e), true);
END
$function$;
