CREATE OR REPLACE FUNCTION public.memory_common_lexemes(lexemes text[])
 RETURNS TABLE(lexeme text, freq real)
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'public'
AS $function$
            SELECT e.lexeme, e.freq
            FROM pg_stats ps,
                 unnest(ps.most_common_elems::text::text[], ps.most_common_elem_freqs)
                     AS e(lexeme, freq)
            WHERE ps.schemaname = 'public' AND ps.tablename = 'memories'
              AND ps.attname = 'search_vector' AND e.lexeme = ANY(lexemes)
        $function$;
