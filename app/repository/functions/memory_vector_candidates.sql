-- The vector side's candidates, planned on every call for its own values (dynamic SQL).
-- The HNSW graph's walk for a filtered scope grows with the rows in the graph over the
-- rows in the scope; an exact read grows with the scope. So a scope of at most
-- sqrt(app.vector_exact_factor * rows in the graph) rows is read whole and sorted by exact
-- distance, and a larger one takes HNSW with iterative scan. The scope is counted first,
-- up to the bound, by tenant and repository only (an index-only count through
-- memories_scope_count_key): an upper bound, so no filter can make an exact read pass the
-- bound, however few rows it keeps. The exact read runs through memories_vector_scope_key,
-- which holds each live row's vector and filter columns, and reads the heap for the
-- nearest only. (A scope narrowed by tags is left to the planner: with memories_tags_key
-- it reads a rare tag's rows through that index rather than walk the graph.) A repository's
-- search takes its rows and, with with_global, the memories of no repository.
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
            live constant text := '
                 FROM public.memories m
                 WHERE m.tenant_id = $4
                   AND m.superseded_by IS NULL
                   AND ($10 OR m.archived_at IS NULL)';
            in_repo constant text := '
                   AND ($5 IS NULL OR m.source_repo = $5
                        OR ($11 AND m.source_repo IS NULL))';
            -- in_repo as two ranges of an index, where the OR would read the heap.
            repo_part constant text := '
                   AND ($5 IS NULL OR m.source_repo = $5)';
            global_part constant text := '
                   AND $5 IS NOT NULL AND $11 AND m.source_repo IS NULL';
            filters constant text := '
                   AND m.embedding IS NOT NULL
                   AND ($6 IS NULL OR m.memory_type = ANY ($6))
                   AND ($7 IS NULL OR m.tags @> $7)
                   AND ($8 IS NULL OR m.trust_level = ANY ($8))
                   AND ($9 IS NULL OR m.relevance_score >= $9)';
            factor constant real :=
                coalesce(nullif(current_setting('app.vector_exact_factor', true), ''), '0')::real;
            graph_rows real;
            exact_bound bigint := 0;
            scope_rows bigint;
        BEGIN
            IF factor > 0 THEN
                -- reltuples: ANALYZE's count, -1 before the first (then the graph is read).
                SELECT c.reltuples INTO graph_rows
                  FROM pg_class c WHERE c.oid = 'public.memories'::regclass;
                exact_bound := floor(sqrt(factor * greatest(graph_rows, 0)));
            END IF;
            IF exact_bound > 0 THEN
                -- The same parameters as the searches below; the bound is an integer.
                EXECUTE 'SELECT (SELECT count(*) FROM (SELECT 1' || live || repo_part
                                || ' LIMIT ' || (exact_bound + 1) || ') repo_rows)
                              + (SELECT count(*) FROM (SELECT 1' || live || global_part
                                || ' LIMIT ' || (exact_bound + 1) || ') global_rows)'
                INTO scope_rows
                USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                      min_relevance, include_archived, with_global;
                IF scope_rows <= exact_bound THEN
                    -- "+ 0": the same order, in a form the HNSW index cannot serve.
                    RETURN QUERY EXECUTE
                        'SELECT hit.id, hit.pinned, hit.last_accessed_at, hit.created_at,
                                hit.access_count, hit.relevance_score,
                                greatest(0, 1 - nearest.distance)::float8,
                                hit.search_vector @@ $3
                         FROM (SELECT * FROM (SELECT m.id, (m.embedding <=> $1) + 0 AS distance'
                               || live || repo_part || filters || '
                               ORDER BY 2 LIMIT $2) repo_rows
                               UNION ALL
                               SELECT * FROM (SELECT m.id, (m.embedding <=> $1) + 0'
                               || live || global_part || filters || '
                               ORDER BY 2 LIMIT $2) global_rows
                               ORDER BY distance LIMIT $2) nearest
                         JOIN public.memories hit ON hit.tenant_id = $4 AND hit.id = nearest.id
                         ORDER BY nearest.distance'
                    USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                          min_relevance, include_archived, with_global;
                    RETURN;
                END IF;
            END IF;
            RETURN QUERY EXECUTE
                'SELECT m.id, m.pinned, m.last_accessed_at, m.created_at, m.access_count,
                        m.relevance_score,
                        greatest(0, 1 - (m.embedding <=> $1))::float8,
                        m.search_vector @@ $3'
                || live || in_repo || filters || '
                 ORDER BY m.embedding <=> $1 LIMIT $2'
            USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                  min_relevance, include_archived, with_global;
        END
        $function$;
