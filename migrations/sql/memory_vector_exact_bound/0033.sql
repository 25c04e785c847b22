-- The largest scope the vector side reads whole and sorts by exact distance, in a graph of
-- graph_rows rows: sqrt(app.vector_exact_factor * graph_rows); 0 (always the graph) when
-- the factor is unset or 0, or the graph's size unknown (docs/search.md, "Small scopes").
-- One rule for both back ends: memory_vector_candidates() on one node, and the statement
-- a Citus worker runs (which reads no table to ask it).
CREATE OR REPLACE FUNCTION public.memory_vector_exact_bound(graph_rows real)
 RETURNS bigint
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
    SELECT floor(sqrt(
               coalesce(nullif(current_setting('app.vector_exact_factor', true), ''), '0')::real
               * greatest(coalesce(graph_rows, 0), 0)))::bigint
$function$;
