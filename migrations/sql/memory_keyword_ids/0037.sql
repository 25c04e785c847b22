-- The ids of one tenant's memories that hold `tsq`, at most max_rows, among those the
-- filter keeps, as a jsonb array in the order read: memory_keyword_postings()'s one read,
-- for a term or for all of a query's terms. The repository's rows and the global ones are
-- two branches, each by an index, as in memory_keyword_hits(). Called by that function,
-- with its owner's rights; nobody else may call it.
CREATE OR REPLACE FUNCTION public.memory_keyword_ids(tenant text, tsq tsquery, max_rows integer, filters memory_filter)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'public'
AS $function$
    SELECT coalesce(jsonb_agg(h.id), '[]'::jsonb)
    FROM ((SELECT m.id FROM public.memories m
           WHERE m.tenant_id = tenant
             AND (filters.repo IS NULL OR m.source_repo = filters.repo)
             AND m.search_vector @@ tsq
             AND public.memory_matches(m, filters)
           LIMIT max_rows)
          UNION ALL
          (SELECT m.id FROM public.memories m
           WHERE filters.repo IS NOT NULL AND coalesce(filters.with_global, true)
             AND m.tenant_id = tenant
             AND m.source_repo IS NULL
             AND m.search_vector @@ tsq
             AND public.memory_matches(m, filters)
           LIMIT max_rows)) AS h
$function$;
