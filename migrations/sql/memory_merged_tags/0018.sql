CREATE OR REPLACE FUNCTION public.memory_merged_tags(current_tags text[], incoming text[])
 RETURNS text[]
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
            SELECT coalesce(array_agg(t ORDER BY n), '{}')
            FROM (SELECT t, min(n) AS n
                  FROM unnest(current_tags || incoming) WITH ORDINALITY AS u(t, n)
                  GROUP BY t) merged
        $function$;
