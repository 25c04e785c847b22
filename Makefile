.PHONY: run test lint bench
run:  ## start the service on 127.0.0.1:8080
	./scripts/run
test: ## run the test suite
	./scripts/test
lint:
	./scripts/lint
