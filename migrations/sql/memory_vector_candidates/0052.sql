-- The search's vector side: the nearest within the search's scope, read by
-- memory_nearest(), the one read of the nearest within a scope (migration 0052), with what
-- the search ranks them by (its statements and plans are those of migration 0043).
-- A candidate's access counts are not here: they live in memory_access (migration 0030).
CREATE OR REPLACE FUNCTION public.memory_vector_candidates(query vector, max_rows integer, all_terms tsquery, tenant text, filters memory_filter)
 RETURNS TABLE(id uuid, pinned boolean, created_at timestamp with time zone, relevance_score real, vector_similarity double precision, holds_all_terms boolean)
 LANGUAGE sql
 STABLE
AS $function$
    SELECT n.id, n.pinned, n.created_at, n.relevance_score, n.vector_similarity,
           n.holds_all_terms
    FROM public.memory_nearest(ARRAY[query], max_rows, tenant, filters, false, 1, all_terms) n
$function$;
