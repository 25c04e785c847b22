-- Whether memory m is one that filter f keeps: the one predicate every statement reads
-- memories through (the search's two readers, a list, an export's page, the scope counts).
-- A NULL filter, or a NULL field of one, keeps what an empty filter keeps: the live
-- memories (not superseded, not archived, not quarantined) of every repository, held ones
-- too (a memory written after untrusted input, waiting for a person: app/domain/
-- provenance.py). A filter for what is handed over unasked (include_held false) leaves the
-- held ones out, but for those the asking session wrote itself (held_session). A person
-- keeps what their keys wrote (whom a personal memory reaches is row security's, not a
-- filter's: migration 0045). The tenant
-- is not here: each statement names it first, as its indexes' first column; so is the
-- repository, where a statement reads its rows and the global ones as two ranges.
-- LANGUAGE sql and IMMUTABLE, with no SET: the planner inlines it, so `memory_matches(m,
-- ...)` is planned as the expressions below (an index still serves them, and a partial
-- index's predicate is still implied). m is a row of memories, or on a Citus worker of one
-- of its shards (another type of row): anyelement takes either. What an index entry holds
-- (type, trust, relevance, time) is memory_entry_matches()'s (migration 0053).
CREATE OR REPLACE FUNCTION public.memory_matches(m anyelement, f public.memory_filter)
 RETURNS boolean
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT (coalesce((f).include_superseded, false) OR (m).superseded_by IS NULL)
       AND (coalesce((f).include_archived, false) OR (m).archived_at IS NULL)
       AND (coalesce((f).include_quarantined, false) OR (m).quarantined_at IS NULL)
       AND ((f).repo IS NULL OR (m).source_repo = (f).repo
            OR (coalesce((f).with_global, true) AND (m).source_repo IS NULL))
       AND public.memory_entry_matches(m, f)
       AND ((f).tags IS NULL OR (m).tags @> (f).tags)
       AND (coalesce((f).include_held, true) OR (m).held_at IS NULL
            OR (m).provenance ->> 'session_id' = (f).held_session::text)
       AND ((f).person IS NULL OR (m).person_id = (f).person)
$function$;
