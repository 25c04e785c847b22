-- Whether memory m is live: what a filter with nothing set keeps (memory_matches).
-- m: a row of memories, or of one of its shards.
CREATE OR REPLACE FUNCTION public.memory_is_live(m anyelement)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT public.memory_matches(m, NULL::public.memory_filter)
$function$;
