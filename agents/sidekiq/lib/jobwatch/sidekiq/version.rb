# The integration's and collector's version, shared by the gemspec and the collector's log line.
module Jobwatch
  module Sidekiq
    VERSION = "0.1.0"
  end
end
