-- At most what share of the rows of `home` (memory_home()) hold every one of these tags,
-- from ANALYZE's most common elements of its tags (owner rights: pg_stats hides a table
-- under row-level security). Each tag's share bounds the share of all of them; a tag
-- ANALYZE did not list is rarer than the least listed one, and counts as that. NULL when
-- ANALYZE has no element statistics for the column (before the first, or when no memory
-- has a tag).
CREATE OR REPLACE FUNCTION public.memory_tags_share(tags text[], home regclass)
 RETURNS real
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
AS $function$
    SELECT min(coalesce(listed.freq, stats.least_freq))
    FROM (SELECT ps.most_common_elems::text::text[] AS elems,
                 ps.most_common_elem_freqs AS freqs,
                 -- After the elements' frequencies: their minimum, maximum, and nulls'.
                 ps.most_common_elem_freqs[
                     cardinality(ps.most_common_elems::text::text[]) + 1] AS least_freq
          FROM pg_class c
          JOIN pg_stats ps ON ps.schemaname = c.relnamespace::regnamespace::text
                          AND ps.tablename = c.relname
          WHERE c.oid = memory_tags_share.home
            AND ps.attname = 'tags' AND ps.most_common_elems IS NOT NULL) stats
    CROSS JOIN unnest(memory_tags_share.tags) AS wanted(tag)
    LEFT JOIN LATERAL (
        SELECT e.freq FROM unnest(stats.elems, stats.freqs) AS e(tag, freq)
        WHERE e.tag = wanted.tag) listed ON true
$function$;
