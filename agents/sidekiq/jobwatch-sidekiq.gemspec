# For those who install the integration and collector as a gem; nothing needs bundler
# (`require "jobwatch/sidekiq"` with lib/ on the load path works the same).
require_relative "lib/jobwatch/sidekiq/version"

Gem::Specification.new do |spec|
  spec.name = "jobwatch-sidekiq"
  spec.version = Jobwatch::Sidekiq::VERSION
  spec.summary = "jobwatch's Sidekiq integration (middleware recording job changes) and collector"
  spec.description = "Records every Sidekiq job change into a bounded Redis stream and sends it, with Sidekiq's " \
                     "processes, queues and sets, to a self-hosted jobwatch; carries out jobwatch's commands (revoke, retry, " \
                     "delete, run now, kill, retry all dead, clear a queue, quiet and stop a process)."
  spec.authors = ["jobwatch contributors"]
  spec.files = Dir["lib/**/*.rb", "bin/*", "README.md"]
  spec.bindir = "bin"
  spec.executables = ["jobwatch-sidekiq"]
  spec.require_paths = ["lib"]
  spec.required_ruby_version = ">= 3.0"
  spec.add_dependency "sidekiq", ">= 6.4", "< 8"
end
