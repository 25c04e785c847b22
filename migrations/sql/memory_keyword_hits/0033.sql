-- A term's keyword hits for the caller's tenant, at most max_rows, through the GIN indexes
-- (owner rights: row-level security keeps tsvector @@ tsquery out of index conditions, so
-- the function enforces the tenant itself), among the memories the filter keeps
-- (memory_matches). A repository's search reads that repository's rows and, unless the
-- filter leaves them out, the memories of no repository: two branches, each by an index.
-- Planned on every call, for its own tenant, term and filter (force_custom_plan): a plan
-- kept per connection was the plan for whichever tenant called first on it
-- (docs/search.md, "One plan for every tenant"). Planning costs about 0.1 ms a call.
CREATE OR REPLACE FUNCTION public.memory_keyword_hits(query tsquery, max_rows integer, filters memory_filter)
 RETURNS TABLE(hit uuid)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
    (SELECT m.id FROM public.memories m
     WHERE m.tenant_id = current_setting('app.tenant_id', true)
       AND (filters.repo IS NULL OR m.source_repo = filters.repo)
       AND m.search_vector @@ query
       AND public.memory_matches(m, filters)
     LIMIT max_rows)
    UNION ALL
    (SELECT m.id FROM public.memories m
     WHERE filters.repo IS NOT NULL AND coalesce(filters.with_global, true)
       AND m.tenant_id = current_setting('app.tenant_id', true)
       AND m.source_repo IS NULL
       AND m.search_vector @@ query
       AND public.memory_matches(m, filters)
     LIMIT max_rows)
$function$;
