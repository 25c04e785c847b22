-- One branch per case, so that the repository is an index condition where there is one
-- (`repo IS NULL OR source_repo = repo` can never be): only one branch returns rows.
CREATE OR REPLACE FUNCTION memory_keyword_hits(
    query tsquery, max_rows integer, repo text, types text[], tags text[],
    trust text[], min_relevance real, include_archived boolean)
RETURNS TABLE (hit uuid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public
AS $$
    (SELECT m.id FROM public.memories m
     WHERE memory_keyword_hits.repo IS NOT NULL
       AND m.tenant_id = current_setting('app.tenant_id', true)
       AND m.source_repo = memory_keyword_hits.repo 
      AND m.search_vector @@ memory_keyword_hits.query
      AND m.superseded_by IS NULL
      AND (memory_keyword_hits.include_archived OR m.archived_at IS NULL)
      AND (memory_keyword_hits.types IS NULL
           OR m.memory_type = ANY (memory_keyword_hits.types))
      AND (memory_keyword_hits.tags IS NULL OR m.tags @> memory_keyword_hits.tags)
      AND (memory_keyword_hits.trust IS NULL
           OR m.trust_level = ANY (memory_keyword_hits.trust))
      AND (memory_keyword_hits.min_relevance IS NULL
           OR m.relevance_score >= memory_keyword_hits.min_relevance)
     LIMIT memory_keyword_hits.max_rows)
    UNION ALL
    (SELECT m.id FROM public.memories m
     WHERE memory_keyword_hits.repo IS NULL
       AND m.tenant_id = current_setting('app.tenant_id', true) 
      AND m.search_vector @@ memory_keyword_hits.query
      AND m.superseded_by IS NULL
      AND (memory_keyword_hits.include_archived OR m.archived_at IS NULL)
      AND (memory_keyword_hits.types IS NULL
           OR m.memory_type = ANY (memory_keyword_hits.types))
      AND (memory_keyword_hits.tags IS NULL OR m.tags @> memory_keyword_hits.tags)
      AND (memory_keyword_hits.trust IS NULL
           OR m.trust_level = ANY (memory_keyword_hits.trust))
      AND (memory_keyword_hits.min_relevance IS NULL
           OR m.relevance_score >= memory_keyword_hits.min_relevance)
     LIMIT memory_keyword_hits.max_rows)
$$;
