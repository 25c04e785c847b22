-- Whether memory m is one that filter f keeps by what a scope index's entry holds beside
-- its keys (memories_scope_vectors_key: type, trust, relevance, creation time): the part of
-- memory_matches() an index-only read can answer. memory_matches() says the rest (what is
-- live, the repository, tags, what is held, the person) and calls this for these.
-- A statement planned once for any filter (memory_nearest()'s static read) ranks the
-- index's entries by this alone, where memory_matches() would name columns only the row
-- holds, and the planner would read a page of the table for every entry.
-- LANGUAGE sql and IMMUTABLE, with no SET: inlined, as memory_matches() is.
CREATE OR REPLACE FUNCTION public.memory_entry_matches(m anyelement, f public.memory_filter)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT ((f).types IS NULL OR (m).memory_type = ANY ((f).types))
       AND ((f).trust IS NULL OR (m).trust_level = ANY ((f).trust))
       AND ((f).min_relevance IS NULL OR (m).relevance_score >= (f).min_relevance)
       AND ((f).since IS NULL OR (m).created_at >= (f).since)
       AND ((f).until IS NULL OR (m).created_at < (f).until)
$function$;
