-- The vector side's candidates, planned on every call for its own values (dynamic SQL).
-- A scope of at most app.vector_exact_below rows (counted, up to that many, through the
-- b-tree) is read whole and sorted by exact distance: cheaper there than an HNSW scan,
-- which walks far through the graph to find a small scope's rows, and exact. A larger
-- scope takes HNSW with iterative scan. A repository's search takes its rows and, with
-- with_global, the memories of no repository.
CREATE OR REPLACE FUNCTION public.memory_vector_candidates(
    query vector, max_rows integer, all_terms tsquery, tenant text, repo text, types text[],
    tags text[], trust text[], min_relevance real, include_archived boolean,
    with_global boolean)
 RETURNS TABLE(id uuid, pinned boolean, last_accessed_at timestamp with time zone, created_at timestamp with time zone, access_count integer, relevance_score real, vector_similarity double precision, holds_all_terms boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
        DECLARE
            scope constant text := '
                 FROM public.memories m
                 WHERE m.tenant_id = $4
                   AND m.superseded_by IS NULL
                   AND ($10 OR m.archived_at IS NULL)
                   AND ($5 IS NULL OR m.source_repo = $5
                        OR ($11 AND m.source_repo IS NULL))
                   AND ($6 IS NULL OR m.memory_type = ANY ($6))
                   AND ($7 IS NULL OR m.tags @> $7)
                   AND ($8 IS NULL OR m.trust_level = ANY ($8))
                   AND ($9 IS NULL OR m.relevance_score >= $9)
                   AND m.embedding IS NOT NULL';
            exact_below integer :=
                coalesce(nullif(current_setting('app.vector_exact_below', true), ''), '0')::integer;
            scope_rows bigint := exact_below + 1;
        BEGIN
            IF exact_below > 0 THEN
                -- The same parameters as the search below; the bound is an integer.
                EXECUTE 'SELECT count(*) FROM (SELECT 1 ' || scope
                        || ' LIMIT ' || (exact_below + 1) || ') s'
                INTO scope_rows
                USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                      min_relevance, include_archived, with_global;
            END IF;
            RETURN QUERY EXECUTE
                'SELECT m.id, m.pinned, m.last_accessed_at, m.created_at, m.access_count,
                        m.relevance_score,
                        greatest(0, 1 - (m.embedding <=> $1))::float8,
                        m.search_vector @@ $3'
                || scope
                -- "+ 0": the same order, in a form the HNSW index cannot serve.
                || CASE WHEN scope_rows <= exact_below
                        THEN ' ORDER BY (m.embedding <=> $1) + 0 LIMIT $2'
                        ELSE ' ORDER BY m.embedding <=> $1 LIMIT $2' END
            USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                  min_relevance, include_archived, with_global;
        END
        $function$;
