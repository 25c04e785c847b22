-- A term's keyword hits for the caller's tenant, at most max_rows, through the GIN indexes
-- (owner rights: row-level security keeps tsvector @@ tsquery out of index conditions, so
-- the function enforces the tenant itself). A repository's search reads that repository's
-- rows and, with with_global, the memories of no repository (each branch by an index).
-- Planned on every call, for its own tenant and term (force_custom_plan), as the vector
-- side is: a plan kept per connection was the plan for whichever tenant called first on
-- it, since the planner estimates with current_setting()'s value; after a first call from
-- a tenant with no rows, a large tenant's every term walked all its rows. Planned for no
-- tenant in particular, it walked them too wherever tenants were many and small
-- (docs/search.md, "One plan for every tenant"). Planning costs about 0.1 ms a call.
CREATE OR REPLACE FUNCTION public.memory_keyword_hits(
    query tsquery, max_rows integer, repo text, types text[], tags text[], trust text[],
    min_relevance real, include_archived boolean, with_global boolean)
 RETURNS TABLE(hit uuid)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
 SET plan_cache_mode TO 'force_custom_plan'
AS $function$
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
     WHERE memory_keyword_hits.repo IS NOT NULL AND memory_keyword_hits.with_global
       AND m.tenant_id = current_setting('app.tenant_id', true)
       AND m.source_repo IS NULL
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
$function$;
