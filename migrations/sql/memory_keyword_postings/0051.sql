-- Each of the query's terms' keyword hits in one call, for one tenant, at most max_rows a
-- term, among the memories the filter keeps: the keyword side of the search statement, on
-- one PostgreSQL and on a Citus worker alike. Its queries read the table the tenant's rows
-- are in (memory_home(): memories, or on a Citus worker the tenant's shard, named itself:
-- a read through the distributed table would be a distributed query nested in the
-- search's) through its GIN index, with owner rights: under row-level security the
-- planner may not take tsvector @@ tsquery to an index, and would read every row of the
-- tenant. So it answers only for the transaction's own tenant (app.tenant_id): another
-- tenant's name gets nothing; and, as the row policy of migration 0045 would, it reads a
-- personal row only for its person (app.person_id) or the service's own work
-- (app.every_person): another person's hits would move the reader's document frequencies,
-- and so their scores, with what that person's memories say.
-- On Citus it is a distributed function, co-located with memories by `tenant` (migration
-- 0035), so that a call of its own is delegated to the tenant's worker.
-- A term common in the tenant's table (a GIN scan reads a term's whole posting list before
-- its first row, 75-250 ms a query at a million rows) is not read: a term is common when
-- ANALYZE's statistics give it more than 5 x max_rows rows of that table, and its answer
-- is then its frequency there, for the document frequency, instead of its hits. This is
-- the search's one rule for common terms.
-- With `all_terms` (a keyword-only search), when no term was read with a hit and the query
-- has several, the rows holding all of them are read instead, under the key "" (no lexeme
-- is empty).
-- A repository's rows and the global ones are two branches, each by an index. The answer
-- is one jsonb object ({"canari": ["<id>", ...], "test": 0.31, ...}): a value of a
-- built-in type, which a prepared statement keeps across migrations (a composite's would
-- change with its type).
CREATE OR REPLACE FUNCTION public.memory_keyword_postings(tenant text, query text, max_rows integer, filters memory_filter, all_terms boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
AS $function$
DECLARE
    home regclass;
    lexemes text[];
    quoted text[];
    common jsonb;
    keys text[];
    queries tsquery[];
    postings jsonb := '{}'::jsonb;
BEGIN
    IF tenant IS DISTINCT FROM current_setting('app.tenant_id', true) THEN
        RETURN '{}'::jsonb;
    END IF;
    lexemes := ARRAY(SELECT t.lexeme FROM unnest(to_tsvector('english'::regconfig, query)) AS t);
    -- Each as a one-term query's text (quoted: a lexeme may hold any character).
    quoted := ARRAY(SELECT '''' || replace(replace(l, '\', '\\'), '''', '''''') || ''''
                    FROM unnest(lexemes) AS l);
    -- The table the tenant's rows are in, with their statistics.
    home := public.memory_home(tenant);
    SELECT coalesce(jsonb_object_agg(e.lexeme, e.freq), '{}'::jsonb) INTO common
    FROM pg_class c
    JOIN pg_stats s ON s.schemaname = 'public' AND s.tablename = c.relname
                   AND s.attname = 'search_vector'
    CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs)
        AS e(lexeme, freq)
    WHERE c.oid = home AND e.lexeme = ANY (lexemes) AND e.freq * c.reltuples > 5 * max_rows;
    -- Each other term, as a one-term query.
    SELECT array_agg(t.l), array_agg(t.q::tsquery) INTO keys, queries
    FROM unnest(lexemes, quoted) AS t(l, q) WHERE NOT common ? t.l;
    FOR pass IN 1..2 LOOP
        IF pass = 2 THEN
            -- A keyword-only search whose terms had no hit: the rows holding all of them.
            EXIT WHEN NOT all_terms OR cardinality(lexemes) < 2
                OR EXISTS (SELECT 1 FROM jsonb_each(postings) p WHERE p.value <> '[]'::jsonb);
            keys := ARRAY[''];
            queries := ARRAY[array_to_string(quoted, ' & ')::tsquery];
        END IF;
        EXECUTE format($hits$
            SELECT $1 || coalesce(jsonb_object_agg(q.key, hits.ids), '{}'::jsonb)
            FROM unnest($2::text[], $3::tsquery[]) AS q(key, tsq)
            CROSS JOIN LATERAL (
                SELECT coalesce(jsonb_agg(h.id), '[]'::jsonb) AS ids
                FROM ((SELECT m.id FROM %1$s m
                       WHERE m.tenant_id = $4
                         AND (($5).repo IS NULL OR m.source_repo = ($5).repo)
                         AND m.search_vector @@ q.tsq
                         AND public.memory_matches(m, $5)
                         AND (m.personal_to IS NULL OR m.personal_to = $7
                              OR current_setting('app.every_person', true) = 'on')
                       LIMIT $6)
                      UNION ALL
                      (SELECT m.id FROM %1$s m
                       WHERE ($5).repo IS NOT NULL AND coalesce(($5).with_global, true)
                         AND m.tenant_id = $4
                         AND m.source_repo IS NULL
                         AND m.search_vector @@ q.tsq
                         AND public.memory_matches(m, $5)
                         AND (m.personal_to IS NULL OR m.personal_to = $7
                              OR current_setting('app.every_person', true) = 'on')
                       LIMIT $6)) AS h
            ) AS hits
        $hits$, home)
        INTO postings
        USING postings, keys, queries, tenant, filters, max_rows,
              nullif(current_setting('app.person_id', true), '')::uuid;
    END LOOP;
    RETURN postings || common;
END
$function$;
