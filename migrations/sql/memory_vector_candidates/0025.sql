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
            -- Every statement below takes this one value and reads its fields by name
            -- (the type: migration 0025).
            search public.memory_vector_search;
            live constant text := '
                 FROM public.memories m
                 WHERE m.tenant_id = ($1).tenant
                   AND m.superseded_by IS NULL
                   AND (($1).include_archived OR m.archived_at IS NULL)';
            in_repo constant text := '
                   AND (($1).repo IS NULL OR m.source_repo = ($1).repo
                        OR (($1).with_global AND m.source_repo IS NULL))';
            -- in_repo as two ranges of an index, where the OR would read the heap.
            repo_part constant text := '
                   AND (($1).repo IS NULL OR m.source_repo = ($1).repo)';
            global_part constant text := '
                   AND ($1).repo IS NOT NULL AND ($1).with_global AND m.source_repo IS NULL';
            filters constant text := '
                   AND m.embedding IS NOT NULL
                   AND (($1).types IS NULL OR m.memory_type = ANY (($1).types))
                   AND (($1).tags IS NULL OR m.tags @> ($1).tags)
                   AND (($1).trust IS NULL OR m.trust_level = ANY (($1).trust))
                   AND (($1).min_relevance IS NULL OR m.relevance_score >= ($1).min_relevance)';
            factor constant real :=
                coalesce(nullif(current_setting('app.vector_exact_factor', true), ''), '0')::real;
            graph_rows real;
            scope_rows bigint;
        BEGIN
            search.query := query;
            search.max_rows := max_rows;
            search.all_terms := all_terms;
            search.tenant := tenant;
            search.repo := repo;
            search.types := types;
            search.tags := tags;
            search.trust := trust;
            search.min_relevance := min_relevance;
            search.include_archived := include_archived;
            search.with_global := with_global;
            search.exact_bound := 0;
            IF factor > 0 THEN
                -- reltuples: ANALYZE's count, -1 before the first (then the graph is read).
                SELECT c.reltuples INTO graph_rows
                  FROM pg_class c WHERE c.oid = 'public.memories'::regclass;
                search.exact_bound := floor(sqrt(factor * greatest(graph_rows, 0)));
            END IF;
            IF search.exact_bound > 0 THEN
                EXECUTE 'SELECT (SELECT count(*) FROM (SELECT 1' || live || repo_part || '
                                 LIMIT ($1).exact_bound + 1) repo_rows)
                              + (SELECT count(*) FROM (SELECT 1' || live || global_part || '
                                 LIMIT ($1).exact_bound + 1) global_rows)'
                INTO scope_rows
                USING search;
                IF scope_rows <= search.exact_bound THEN
                    -- "+ 0": the same order, in a form the HNSW index cannot serve.
                    RETURN QUERY EXECUTE
                        'SELECT hit.id, hit.pinned, hit.last_accessed_at, hit.created_at,
                                hit.access_count, hit.relevance_score,
                                greatest(0, 1 - nearest.distance)::float8,
                                hit.search_vector @@ ($1).all_terms
                         FROM (SELECT * FROM (SELECT m.id, (m.embedding <=> ($1).query) + 0 AS distance'
                               || live || repo_part || filters || '
                               ORDER BY 2 LIMIT ($1).max_rows) repo_rows
                               UNION ALL
                               SELECT * FROM (SELECT m.id, (m.embedding <=> ($1).query) + 0'
                               || live || global_part || filters || '
                               ORDER BY 2 LIMIT ($1).max_rows) global_rows
                               ORDER BY distance LIMIT ($1).max_rows) nearest
                         JOIN public.memories hit
                           ON hit.tenant_id = ($1).tenant AND hit.id = nearest.id
                         ORDER BY nearest.distance'
                    USING search;
                    RETURN;
                END IF;
            END IF;
            RETURN QUERY EXECUTE
                'SELECT m.id, m.pinned, m.last_accessed_at, m.created_at, m.access_count,
                        m.relevance_score,
                        greatest(0, 1 - (m.embedding <=> ($1).query))::float8,
                        m.search_vector @@ ($1).all_terms'
                || live || in_repo || filters || '
                 ORDER BY m.embedding <=> ($1).query LIMIT ($1).max_rows'
            USING search;
        END
        $function$;
