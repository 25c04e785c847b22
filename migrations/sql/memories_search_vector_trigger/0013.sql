CREATE OR REPLACE FUNCTION public.memories_search_vector_trigger()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
        BEGIN
            NEW.search_vector := memories_search_vector(NEW.content, NEW.category, NEW.tags, NEW.context);
            RETURN NEW;
        END
        $function$;
