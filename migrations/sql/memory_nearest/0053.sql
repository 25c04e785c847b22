-- The one read of the nearest memories within a scope: the search's vector side
-- (memory_vector_candidates()), the write path's near-duplicates and tidy's neighbours all
-- read through it (app/repository/nearest.py). A scope is the tenant's rows that `filters`
-- keeps (memory_matches), of one repository with or without the global memories, or of
-- the global memories alone (global_only), as the row policy lets the caller see them.
-- For each vector of `queries` (one, or several in one statement: a batch's, a page's),
-- at most max_rows rows, nearest first, read from the table the tenant's rows are in
-- (memory_home(): memories on one PostgreSQL, the tenant's shard on a Citus worker),
-- planned on every call for its own values (dynamic SQL). A NULL vector finds nothing.
-- The HNSW graph's walk for a filtered scope grows with the rows in the graph over the
-- rows in the scope; an exact read grows with the scope. So a scope of at most
-- memory_vector_exact_bound(rows in the graph x graph_share) rows is read whole and sorted
-- by exact distance, and a larger one takes HNSW with iterative scan. graph_share is 1 for
-- a search; a read of a few nearest finds them in the graph's first round, so the graph
-- wins over an exact read at a smaller scope, and such a read sizes its bound for a graph
-- that many times smaller (app/repository/nearest.py). The scope is counted first,
-- up to the bound, by tenant and repository and live status only (an index-only count
-- through memories_scope_count_key): what an exact read costs is the range of the index
-- it reads, whatever share of it the rest of the filter keeps, so that range is what is
-- sized; no filter can make an exact read pass the bound, however few rows it keeps.
-- The exact read ranks the scope from memories_scope_vectors_key alone (migration 0040):
-- one contiguous range of entries that hold each live row's vector and the columns a
-- search narrows by (type, trust, relevance, time), an index-only read, where reading the
-- vectors from the rows took a page for each row. The rows are then read in that order,
-- each checked against the whole filter (for what the index does not hold: quarantine,
-- what is held), until max_rows pass. Scopes the index does not hold whole are read from
-- their rows: a search for archived or superseded memories, one narrowed by tags, a scope
-- whose names are too long for an entry (memory_vector_indexable()), and a tenant's search
-- in no repository (within the bound only where the tenant is small; its repositories'
-- names are not all known to fit).
-- A scope narrowed by tags is sized first from ANALYZE's statistics
-- (memory_tags_share(): at least the tenant's rows, up to sampling): within the bound it
-- is read whole too, its rows through memories_tags_key, without counting. Otherwise the
-- planner chooses, and it walked the graph for a tag on 1% of a million rows, slower than
-- the read (docs/search.md). A repository's search takes its rows and, unless the filter
-- leaves them out, the memories of no repository, as two ranges of an index.
-- The rows in the graph are ANALYZE's count (memory_home_rows()), -1 before the first:
-- then the graph is walked. A table within the bound is read exactly without a count.
-- A repository with an HNSW graph of its own (memory_repository_graph(), migration 0043:
-- built for a large repository by `agent-memory graphs`) is walked there, whatever its
-- size: its name and tenant are written into the statement as constants, so that the
-- planner sees that the graph's predicate holds and takes it. Its global memories, when
-- the scope takes them, come from the rule above, and the nearest of both are kept.
-- One vector is its statement's value (($1).query); several are a column of a lateral
-- unnest, each vector's rows read by the same statement.
-- On one PostgreSQL (its table `memories`, not a shard) a repository's count and its
-- exact read for one vector are static statements (migration 0053): planned once per
-- connection where the caller keeps one plan (plan_cache_mode = force_generic_plan, as the
-- search and the write path do), where EXECUTE plans each call afresh, which cost a
-- repository's search and a store's near-duplicate read 2-5 ms (docs/benchmarks.md). A
-- plan kept for any values cannot see which of the filter's fields are unset, so these
-- state the scope indexes' predicate (live: neither superseded nor archived) and rank the
-- entries by what they hold (memory_entry_matches()); each row is then checked against
-- the whole filter, as the dynamic read's rows are.
CREATE OR REPLACE FUNCTION public.memory_nearest(queries vector[], max_rows integer, tenant text, filters memory_filter, global_only boolean DEFAULT false, graph_share real DEFAULT 1, all_terms tsquery DEFAULT NULL::tsquery)
 RETURNS TABLE(ord bigint, id uuid, pinned boolean, created_at timestamp with time zone, relevance_score real, vector_similarity double precision, holds_all_terms boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
        DECLARE
            home constant regclass := public.memory_home(tenant);
            several constant boolean := coalesce(cardinality(queries), 0) <> 1;
            -- The query vector, and its place in `queries`, as each statement reads them.
            query_of constant text := CASE WHEN several THEN 'q.query' ELSE '($1).query' END;
            ord_of constant text := CASE WHEN several THEN 'q.ord' ELSE '1::bigint' END;
            -- A vector of the queries' size (whether the scope's entries hold them).
            a_query constant vector := (SELECT v FROM unnest(queries) v WHERE v IS NOT NULL LIMIT 1);
            -- Every statement below takes this one value and reads its fields by name.
            search public.memory_vector_search;
            -- The tenant's rows that one of the filters below keeps (a field of search).
            kept_by constant text := '
                 FROM ' || home::text || ' m
                 WHERE m.tenant_id = ($1).tenant
                   AND public.memory_matches(m, ($1).%s)';
            -- The global memories alone (a scope of no repository, not the tenant's).
            only_global constant text := CASE WHEN global_only THEN '
                   AND m.source_repo IS NULL' ELSE '' END;
            -- The filter's rows (the graph's walk filters by this).
            kept constant text := format(kept_by, 'filters') || only_global;
            -- The same rows within one of the ranges below, which say the repository: the
            -- filter given again without it. Its repository clause, an OR of the two
            -- ranges, was the ranges' condition again: the planner counted it twice, took
            -- a large range for a few rows, and read it through a bitmap of the rows'
            -- pages where the index alone answers.
            in_range constant text := format(kept_by, 'within');
            -- The repository's rows (or the global ones alone), or the global ones beside
            -- a repository's, as one range of an index each.
            repo_part constant text := CASE WHEN global_only THEN only_global ELSE '
                   AND (($1).filters.repo IS NULL OR m.source_repo = ($1).filters.repo)' END;
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
                SELECT ' || ord_of || ', hit.id, hit.pinned, hit.created_at, hit.relevance_score,
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
            -- Whether the scope's names are known to fit the index's entries.
            one_range constant boolean := (filters).repo IS NOT NULL OR global_only;
            -- The scope is one repository's rows (with or without its global ones) in one
            -- PostgreSQL's own table: its count and exact read are the static statements.
            kept_plans constant boolean := home = 'public.memories'::regclass
                AND (filters).repo IS NOT NULL AND NOT global_only AND index_holds_scope;
            within public.memory_filter;
            sized public.memory_filter;
            candidates text;
            ranked public.memory_filter;
            graph_rows real;
            scope_rows bigint;
            tag_rows real;
            reading text;
        BEGIN
            IF a_query IS NULL THEN
                RETURN;  -- no vector: nothing is near
            END IF;
            search.query := CASE WHEN NOT several THEN queries[1] END;
            search.queries := queries;
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
            search.exact_bound := public.memory_vector_exact_bound(graph_rows * graph_share);
            IF (filters).repo IS NOT NULL AND NOT global_only
               AND public.memory_repository_graph(tenant, (filters).repo, home) THEN
                -- The repository's nearest from its own graph (its constants let the
                -- planner prove the graph's predicate), then checked in order.
                candidates := format('(
                    SELECT m.id, m.embedding <=> %s AS distance
                    FROM %s m
                    WHERE m.tenant_id = %L AND m.source_repo = %L
                      AND public.memory_matches(m, ($1).within) AND m.embedding IS NOT NULL
                    ORDER BY m.embedding <=> %s LIMIT ($1).max_rows)',
                    query_of, home, tenant, (filters).repo, query_of);
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
                       AND public.memory_vector_indexable(tenant, NULL, a_query) THEN
                        candidates := candidates || '
                            UNION ALL
                            SELECT m.id, (m.embedding <=> ' || query_of || ') + 0'
                            || from_index || global_part;
                    ELSE
                        candidates := candidates || '
                            UNION ALL (
                            SELECT m.id, (m.embedding <=> ' || query_of || ')'
                            || CASE WHEN scope_rows <= search.exact_bound THEN ' + 0' ELSE '' END
                            || in_range || global_part || ' AND m.embedding IS NOT NULL
                            ORDER BY 2 LIMIT ($1).max_rows)';
                    END IF;
                END IF;
                reading := format(checked_in_order, candidates);
            ELSIF search.exact_bound > 0 THEN
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
                ELSIF kept_plans THEN
                    -- The count below, as a static statement.
                    SELECT (SELECT count(*) FROM (
                                SELECT 1 FROM public.memories m
                                WHERE m.tenant_id = tenant AND m.source_repo = (filters).repo
                                  AND m.superseded_by IS NULL AND m.archived_at IS NULL
                                LIMIT search.exact_bound + 1) repo_rows)
                         + (SELECT count(*) FROM (
                                SELECT 1 FROM public.memories m
                                WHERE m.tenant_id = tenant AND m.source_repo IS NULL
                                  AND coalesce((filters).with_global, true)
                                  AND m.superseded_by IS NULL AND m.archived_at IS NULL
                                LIMIT search.exact_bound + 1) global_rows)
                    INTO scope_rows;
                ELSE
                    EXECUTE 'SELECT (SELECT count(*) FROM (SELECT 1' || counted || repo_part || '
                                     LIMIT ($1).exact_bound + 1) repo_rows)
                                  + (SELECT count(*) FROM (SELECT 1' || counted || global_part || '
                                     LIMIT ($1).exact_bound + 1) global_rows)'
                    INTO scope_rows
                    USING search;
                END IF;
                IF scope_rows <= search.exact_bound AND one_range AND index_holds_scope
                   AND public.memory_vector_indexable(tenant, (filters).repo, a_query) THEN
                    IF kept_plans AND NOT several THEN
                        -- The read below, as a static statement.
                        RETURN QUERY
                        SELECT 1::bigint, hit.id, hit.pinned, hit.created_at, hit.relevance_score,
                               greatest(0, 1 - nearest.distance)::float8,
                               hit.search_vector @@ all_terms
                        FROM (SELECT * FROM (
                                SELECT m.id, (m.embedding <=> a_query) + 0 AS distance
                                FROM public.memories m
                                WHERE m.tenant_id = tenant AND m.source_repo = (filters).repo
                                  AND m.superseded_by IS NULL AND m.archived_at IS NULL
                                  AND public.memory_vector_indexable(m.tenant_id, m.source_repo, m.embedding)
                                  AND public.memory_entry_matches(m, filters)
                                UNION ALL
                                SELECT m.id, (m.embedding <=> a_query) + 0
                                FROM public.memories m
                                WHERE m.tenant_id = tenant AND m.source_repo IS NULL
                                  AND coalesce((filters).with_global, true)
                                  AND m.superseded_by IS NULL AND m.archived_at IS NULL
                                  AND public.memory_vector_indexable(m.tenant_id, m.source_repo, m.embedding)
                                  AND public.memory_entry_matches(m, filters)
                              ) ranked ORDER BY distance) nearest
                        -- LIMIT 1 (an id is one row): a row at a time, in order, whatever
                        -- a plan made for a tenant of two rows would join them by.
                        CROSS JOIN LATERAL (
                            SELECT m.* FROM public.memories m
                            WHERE m.tenant_id = tenant AND m.id = nearest.id
                              AND public.memory_matches(m, filters)
                            LIMIT 1) hit
                        ORDER BY nearest.distance
                        LIMIT max_rows;
                        RETURN;
                    END IF;
                    -- Ranked from the index's entries, then checked in order.
                    reading := format(checked_in_order,
                        'SELECT m.id, (m.embedding <=> ' || query_of || ') + 0 AS distance'
                        || from_index || repo_part || '
                         UNION ALL
                         SELECT m.id, (m.embedding <=> ' || query_of || ') + 0'
                        || from_index || global_part);
                ELSIF scope_rows <= search.exact_bound THEN
                    -- "+ 0": the same order, in a form the HNSW index cannot serve.
                    reading :=
                        'SELECT ' || ord_of || ', hit.id, hit.pinned, hit.created_at, hit.relevance_score,
                                greatest(0, 1 - nearest.distance)::float8,
                                hit.search_vector @@ ($1).all_terms
                         FROM (SELECT * FROM (SELECT m.id, (m.embedding <=> ' || query_of || ') + 0 AS distance'
                               || in_range || repo_part || ' AND m.embedding IS NOT NULL
                               ORDER BY 2 LIMIT ($1).max_rows) repo_rows
                               UNION ALL
                               SELECT * FROM (SELECT m.id, (m.embedding <=> ' || query_of || ') + 0'
                               || in_range || global_part || ' AND m.embedding IS NOT NULL
                               ORDER BY 2 LIMIT ($1).max_rows) global_rows
                               ORDER BY distance LIMIT ($1).max_rows) nearest
                         JOIN ' || home::text || ' hit
                           ON hit.tenant_id = ($1).tenant AND hit.id = nearest.id
                         ORDER BY nearest.distance';
                END IF;
            END IF;
            IF reading IS NULL THEN
                reading :=
                    'SELECT ' || ord_of || ', m.id, m.pinned, m.created_at, m.relevance_score,
                            greatest(0, 1 - (m.embedding <=> ' || query_of || '))::float8,
                            m.search_vector @@ ($1).all_terms'
                    || kept || ' AND m.embedding IS NOT NULL
                     ORDER BY m.embedding <=> ' || query_of || ' LIMIT ($1).max_rows';
            END IF;
            IF several THEN
                reading := 'SELECT c.* FROM unnest(($1).queries) WITH ORDINALITY AS q(query, ord)
                              CROSS JOIN LATERAL (' || reading || ') c
                              WHERE q.query IS NOT NULL';
            END IF;
            RETURN QUERY EXECUTE reading USING search;
        END
        $function$;
