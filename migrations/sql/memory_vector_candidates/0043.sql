-- The vector side's candidates, planned on every call for its own values (dynamic SQL),
-- among the memories the filter keeps (memory_matches), read from the table the tenant's
-- rows are in (memory_home(): memories on one PostgreSQL, the tenant's shard on a Citus
-- worker). One function for both back ends: the search statement calls it on either.
-- The HNSW graph's walk for a filtered scope grows with the rows in the graph over the
-- rows in the scope; an exact read grows with the scope. So a scope of at most
-- memory_vector_exact_bound(rows in the graph) rows is read whole and sorted by exact
-- distance, and a larger one takes HNSW with iterative scan. The scope is counted first,
-- up to the bound, by tenant and repository and live status only (an index-only count
-- through memories_scope_count_key): what an exact read costs is the range of the index
-- it reads, whatever share of it the rest of the filter keeps, so that range is what is
-- sized; no filter can make an exact read pass the bound, however few rows it keeps.
-- The exact read ranks the scope from memories_scope_vectors_key alone (migration 0040):
-- one contiguous range of entries that hold each live row's vector and the columns a
-- search narrows by (type, trust, relevance, time), an index-only read, where reading the
-- vectors from the rows took a page for each row (a 1% repository of a million: 10,000
-- pages). The rows are then read in that order, each checked against the whole filter
-- (for what the index does not hold: quarantine, what is held), until max_rows pass: the
-- rows a search returns are read anyway. Scopes the index does not hold whole are read from their rows as before:
-- a search for archived or superseded memories, one narrowed by tags, a scope whose names
-- are too long for an entry (memory_vector_indexable()), and a tenant's search in no
-- repository (within the bound only where the tenant is small; its repositories' names
-- are not all known to fit).
-- A scope narrowed by tags is sized first from ANALYZE's statistics
-- (memory_tags_share(): at least the tenant's rows, up to sampling): within the bound it
-- is read whole too, its rows through memories_tags_key, without counting. Otherwise the
-- planner chooses, and it walked the graph for a tag on 1% of a million rows, three times
-- slower than the read (docs/search.md). A repository's search takes its rows and, unless
-- the filter leaves them out, the memories of no repository, as two ranges of an index.
-- The rows in the graph are ANALYZE's count (memory_home_rows()), -1 before the first:
-- then the graph is walked. A table within the bound is read exactly without a count.
-- A repository with an HNSW graph of its own (memory_repository_graph(), migration 0043:
-- built for a large repository by `agent-memory graphs`) is walked there, whatever its
-- size: its name and tenant are written into the statement as constants, so that the
-- planner sees that the graph's predicate holds and takes it. The exact read of a 1%
-- repository of a million rows took 30-45 ms; its own graph answers in the time of the
-- whole tenant's. Its global memories, when the search takes them, come from the rule
-- above (an exact read of their rows within the bound, the tenant's graph past it), and
-- the nearest of both are kept.
-- A candidate's access counts are not here: they live in memory_access (migration 0030).
CREATE OR REPLACE FUNCTION public.memory_vector_candidates(query vector, max_rows integer, all_terms tsquery, tenant text, filters memory_filter)
 RETURNS TABLE(id uuid, pinned boolean, created_at timestamp with time zone, relevance_score real, vector_similarity double precision, holds_all_terms boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
        DECLARE
            home constant regclass := public.memory_home(tenant);
            -- Every statement below takes this one value and reads its fields by name.
            search public.memory_vector_search;
            -- The tenant's rows that one of the filters below keeps (a field of search).
            kept_by constant text := '
                 FROM ' || home::text || ' m
                 WHERE m.tenant_id = ($1).tenant
                   AND public.memory_matches(m, ($1).%s)';
            -- The filter's rows (the graph's walk filters by this).
            kept constant text := format(kept_by, 'filters');
            -- The same rows within one of the ranges below, which say the repository: the
            -- filter given again without it. Its repository clause, an OR of the two
            -- ranges, was the ranges' condition again: the planner counted it twice, took
            -- a 1,000-row range for 3 rows, and read it through a bitmap of the rows' pages
            -- where the index alone answers (2 ms a range at 100,000 memories).
            in_range constant text := format(kept_by, 'within');
            -- The repository's rows, or the global ones, as one range of an index each.
            repo_part constant text := '
                   AND (($1).filters.repo IS NULL OR m.source_repo = ($1).filters.repo)';
            global_part constant text := '
                   AND ($1).filters.repo IS NOT NULL AND coalesce(($1).filters.with_global, true)
                   AND m.source_repo IS NULL';
            -- What the scope's count reads: the ranges alone, from the index (what the
            -- filter says of archived and superseded rows, nothing else).
            counted constant text := format(kept_by, 'sized');
            -- What the index's entries are ranked by: the filter within a range, without
            -- what only the row holds (tags, quarantine, what is held), which the row is
            -- then checked for.
            from_index constant text := format(kept_by, 'ranked') || '
                   AND public.memory_vector_indexable(m.tenant_id, m.source_repo, m.embedding)';
            -- Candidates (id, distance) ranked, then each row read and checked against the
            -- whole filter in that order (LATERAL: one row at a time), until max_rows pass:
            -- what the candidates' ranking does not hold, the row is checked for.
            checked_in_order constant text := '
                SELECT hit.id, hit.pinned, hit.created_at, hit.relevance_score,
                       greatest(0, 1 - nearest.distance)::float8,
                       hit.search_vector @@ ($1).all_terms
                FROM (SELECT * FROM (%s) ranked ORDER BY distance) nearest
                CROSS JOIN LATERAL (
                    SELECT m.* FROM ' || home::text || ' m
                    WHERE m.tenant_id = ($1).tenant AND m.id = nearest.id
                      AND public.memory_matches(m, ($1).filters)) hit
                ORDER BY nearest.distance
                LIMIT ($1).max_rows';
            -- Whether the index's entries hold every row the filter may keep (they hold
            -- live rows, without their tags).
            index_holds_scope constant boolean := (filters).tags IS NULL
                AND NOT coalesce((filters).include_archived, false)
                AND NOT coalesce((filters).include_superseded, false);
            within public.memory_filter;
            sized public.memory_filter;
            candidates text;
            ranked public.memory_filter;
            graph_rows real;
            scope_rows bigint;
            tag_rows real;
        BEGIN
            search.query := query;
            search.max_rows := max_rows;
            search.all_terms := all_terms;
            search.tenant := tenant;
            search.filters := filters;
            within := filters;
            within.repo := NULL;
            within.with_global := NULL;
            search.within := within;
            sized.include_archived := (filters).include_archived;
            sized.include_superseded := (filters).include_superseded;
            sized.include_quarantined := true;
            search.sized := sized;
            ranked := within;
            ranked.tags := NULL;
            ranked.include_quarantined := true;
            ranked.include_held := true;
            search.ranked := ranked;
            graph_rows := public.memory_home_rows(home);
            search.exact_bound := public.memory_vector_exact_bound(graph_rows);
            IF (filters).repo IS NOT NULL
               AND public.memory_repository_graph(tenant, (filters).repo, home) THEN
                -- The repository's nearest from its own graph (its constants let the
                -- planner prove the graph's predicate), then checked in order.
                candidates := format('(
                    SELECT m.id, m.embedding <=> ($1).query AS distance
                    FROM %s m
                    WHERE m.tenant_id = %L AND m.source_repo = %L
                      AND public.memory_matches(m, ($1).within) AND m.embedding IS NOT NULL
                    ORDER BY m.embedding <=> ($1).query LIMIT ($1).max_rows)',
                    home, tenant, (filters).repo);
                IF coalesce((filters).with_global, true) THEN
                    -- Its global memories by the rule for any scope: within the bound,
                    -- ranked from the index's entries (or read from their rows where the
                    -- index does not hold them); past it, the tenant's graph.
                    scope_rows := search.exact_bound + 1;
                    IF search.exact_bound > 0 THEN
                        EXECUTE 'SELECT count(*) FROM (SELECT 1' || counted || global_part || '
                                 LIMIT ($1).exact_bound + 1) global_rows'
                        INTO scope_rows
                        USING search;
                    END IF;
                    IF scope_rows <= search.exact_bound AND index_holds_scope
                       AND public.memory_vector_indexable(tenant, NULL, query) THEN
                        candidates := candidates || '
                            UNION ALL
                            SELECT m.id, (m.embedding <=> ($1).query) + 0'
                            || from_index || global_part;
                    ELSE
                        candidates := candidates || '
                            UNION ALL (
                            SELECT m.id, (m.embedding <=> ($1).query)'
                            || CASE WHEN scope_rows <= search.exact_bound THEN ' + 0' ELSE '' END
                            || in_range || global_part || ' AND m.embedding IS NOT NULL
                            ORDER BY 2 LIMIT ($1).max_rows)';
                    END IF;
                END IF;
                RETURN QUERY EXECUTE format(checked_in_order, candidates) USING search;
                RETURN;
            END IF;
            IF search.exact_bound > 0 THEN
                IF (filters).tags IS NOT NULL THEN
                    tag_rows := public.memory_tags_share((filters).tags, home)
                                * greatest(graph_rows, 0);
                END IF;
                IF tag_rows <= search.exact_bound THEN
                    scope_rows := ceil(tag_rows);
                ELSIF graph_rows <= search.exact_bound THEN
                    -- The whole table is within the bound, and with it any scope: no count
                    -- (a small tenant's shard on Citus, or a small database).
                    scope_rows := ceil(graph_rows);
                ELSE
                    EXECUTE 'SELECT (SELECT count(*) FROM (SELECT 1' || counted || repo_part || '
                                     LIMIT ($1).exact_bound + 1) repo_rows)
                                  + (SELECT count(*) FROM (SELECT 1' || counted || global_part || '
                                     LIMIT ($1).exact_bound + 1) global_rows)'
                    INTO scope_rows
                    USING search;
                END IF;
                IF scope_rows <= search.exact_bound
                   AND (filters).repo IS NOT NULL AND index_holds_scope
                   AND public.memory_vector_indexable(tenant, (filters).repo, query) THEN
                    -- Ranked from the index's entries, then checked in order.
                    RETURN QUERY EXECUTE format(checked_in_order,
                        'SELECT m.id, (m.embedding <=> ($1).query) + 0 AS distance'
                        || from_index || repo_part || '
                         UNION ALL
                         SELECT m.id, (m.embedding <=> ($1).query) + 0'
                        || from_index || global_part)
                    USING search;
                    RETURN;
                END IF;
                IF scope_rows <= search.exact_bound THEN
                    -- "+ 0": the same order, in a form the HNSW index cannot serve.
                    RETURN QUERY EXECUTE
                        'SELECT hit.id, hit.pinned, hit.created_at, hit.relevance_score,
                                greatest(0, 1 - nearest.distance)::float8,
                                hit.search_vector @@ ($1).all_terms
                         FROM (SELECT * FROM (SELECT m.id, (m.embedding <=> ($1).query) + 0 AS distance'
                               || in_range || repo_part || ' AND m.embedding IS NOT NULL
                               ORDER BY 2 LIMIT ($1).max_rows) repo_rows
                               UNION ALL
                               SELECT * FROM (SELECT m.id, (m.embedding <=> ($1).query) + 0'
                               || in_range || global_part || ' AND m.embedding IS NOT NULL
                               ORDER BY 2 LIMIT ($1).max_rows) global_rows
                               ORDER BY distance LIMIT ($1).max_rows) nearest
                         JOIN ' || home::text || ' hit
                           ON hit.tenant_id = ($1).tenant AND hit.id = nearest.id
                         ORDER BY nearest.distance'
                    USING search;
                    RETURN;
                END IF;
            END IF;
            RETURN QUERY EXECUTE
                'SELECT m.id, m.pinned, m.created_at, m.relevance_score,
                        greatest(0, 1 - (m.embedding <=> ($1).query))::float8,
                        m.search_vector @@ ($1).all_terms'
                || kept || ' AND m.embedding IS NOT NULL
                 ORDER BY m.embedding <=> ($1).query LIMIT ($1).max_rows'
            USING search;
        END
        $function$;
