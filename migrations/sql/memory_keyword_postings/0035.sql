-- Each of the query's terms' keyword hits in one call, for one tenant, at most max_rows a
-- term, among the memories the filter keeps: what memory_keyword_hits() reads a term at a
-- time inside the single node's statement, for the back end that cannot call it there.
-- On Citus it is a distributed function, co-located with memories by `tenant`, and called
-- as its own statement: Citus runs the call on the worker holding the tenant's shard, where
-- its query reads that shard's GIN index with owner rights (under row-level security the
-- worker may not take tsvector @@ tsquery to an index, and read every row of the tenant).
-- It answers only for the transaction's own tenant (app.tenant_id): another tenant's name
-- gets nothing. The repository's rows and the global ones are two branches, each by an
-- index, as in memory_keyword_hits(). The answer is one jsonb object, each lexeme's hits
-- in the order read ({"canari": ["<id>", ...], ...}): a value of a built-in type, which a
-- prepared statement keeps across migrations (a composite's would change with its type).
CREATE OR REPLACE FUNCTION public.memory_keyword_postings(tenant text, query text, max_rows integer, filters memory_filter)
 RETURNS jsonb
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
AS $function$
    SELECT coalesce(jsonb_object_agg(t.lexeme, hits.ids), '{}'::jsonb)
    FROM unnest(to_tsvector('english'::regconfig, query)) AS t
    -- The lexeme as a one-term query (quoted: a lexeme may hold any character).
    CROSS JOIN LATERAL (
        SELECT ('''' || replace(replace(t.lexeme, '\', '\\'), '''', '''''') || '''')::tsquery
            AS tsq
    ) AS term
    CROSS JOIN LATERAL (
        SELECT coalesce(jsonb_agg(h.id), '[]'::jsonb) AS ids
        FROM ((SELECT m.id FROM public.memories m
               WHERE m.tenant_id = tenant
                 AND (filters.repo IS NULL OR m.source_repo = filters.repo)
                 AND m.search_vector @@ term.tsq
                 AND public.memory_matches(m, filters)
               LIMIT max_rows)
              UNION ALL
              (SELECT m.id FROM public.memories m
               WHERE filters.repo IS NOT NULL AND coalesce(filters.with_global, true)
                 AND m.tenant_id = tenant
                 AND m.source_repo IS NULL
                 AND m.search_vector @@ term.tsq
                 AND public.memory_matches(m, filters)
               LIMIT max_rows)) AS h
    ) AS hits
    WHERE tenant = current_setting('app.tenant_id', true)
$function$;
