-- The vector side's candidates, planned on every call for its own values (dynamic SQL):
-- HNSW with iterative scan, or an exact scan through a b-tree when the filter is
-- selective. A repository's search takes its rows and, with with_global, the memories of
-- no repository.
CREATE OR REPLACE FUNCTION public.memory_vector_candidates(
    query vector, max_rows integer, all_terms tsquery, tenant text, repo text, types text[],
    tags text[], trust text[], min_relevance real, include_archived boolean,
    with_global boolean)
 RETURNS TABLE(id uuid, pinned boolean, last_accessed_at timestamp with time zone, created_at timestamp with time zone, access_count integer, relevance_score real, vector_similarity double precision, holds_all_terms boolean)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
        BEGIN
            RETURN QUERY EXECUTE
                'SELECT m.id, m.pinned, m.last_accessed_at, m.created_at, m.access_count,
                        m.relevance_score,
                        greatest(0, 1 - (m.embedding <=> $1))::float8,
                        m.search_vector @@ $3
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
                   AND m.embedding IS NOT NULL
                 ORDER BY m.embedding <=> $1
                 LIMIT $2'
            USING query, max_rows, all_terms, tenant, repo, types, tags, trust,
                  min_relevance, include_archived, with_global;
        END
        $function$;
