# The collector's process: three loops on their own threads (stream, poll, commands)
# sharing one deliverer, started and stopped together. A loop that hits an error (Redis
# restarting, a bug) logs it once per outage and keeps going; TERM or INT stops all
# three after the step they are in, with nothing lost (the checkpoint and the spool
# are on disk).
require "logger"
require "sidekiq"
require "sidekiq/api"
require_relative "../../sidekiq"
require_relative "config"
require_relative "http_client"
require_relative "spool"
require_relative "checkpoint"
require_relative "deliverer"
require_relative "stream_reader"
require_relative "poller"
require_relative "commands"
require_relative "private_files"
require_relative "log_lines"

module Jobwatch
  module Sidekiq
    module Collector
      class Runner
        def self.logger_for(level, io = $stderr)
          logger = Logger.new(io)
          logger.level = { "debug" => Logger::DEBUG, "info" => Logger::INFO, "warn" => Logger::WARN, "error" => Logger::ERROR }.fetch(level)
          # one line per message: names from Sidekiq and jobwatch in it are escaped (LogLines)
          logger.formatter = proc { |severity, time, _, message| "#{time.utc.strftime("%Y-%m-%dT%H:%M:%S.%LZ")} #{severity.ljust(5)} jobwatch-sidekiq: #{LogLines.printable(message.to_s)}\n" }
          logger
        end

        def initialize(config, logger: Runner.logger_for(config.log_level))
          @config = config
          @logger = logger
          @stopping = false
          @lock = Mutex.new
          @wake = ConditionVariable.new
          @failing = {}
        end

        def run
          configure_sidekiq
          client = HttpClient.new(@config.url, @config.api_key)
          PrivateFiles.mkdir_p(@config.spool_dir)
          PrivateFiles.tighten(@config.spool_dir).each { |line| @logger.warn(line) }
          spool = Spool.new(File.join(@config.spool_dir, "events"), @config.spool_max_bytes, @logger)
          reported = ReportedJobs.new
          deliverer = Deliverer.new(client: client, spool: spool, logger: @logger, connection_id: @config.connection_id, seen: ->(events) { reported.learn(events) })
          checkpoint = Checkpoint.new(@config.spool_dir, @config.stream, @logger)
          reader = StreamReader.new(stream: @config.stream, checkpoint: checkpoint, deliverer: deliverer, logger: @logger)
          poller = Poller.new(deliverer: deliverer, logger: @logger, stale_s: @config.process_stale_s, set_scan_max: @config.set_scan_max)
          commands = Commands.new(client: HttpClient.new(@config.url, @config.api_key), logger: @logger, recorder: Jobwatch::Sidekiq.recorder, reported: reported)
          @logger.info("jobwatch-sidekiq #{VERSION} (Sidekiq #{::Sidekiq::VERSION}): Redis #{redacted(@config.redis_url)}, stream #{@config.stream}, " \
                       "jobwatch #{@config.url}, spool #{File.expand_path(@config.spool_dir)}")
          masked = @config.redact_keys.empty? ? "nothing masked (--redact-keys none)" : "the values of keys matching #{@config.redact_keys.join(", ")} masked"
          omitted = @config.omit_args.empty? ? "" : "; the arguments of #{@config.omit_args.join(", ")} are never sent"
          @logger.info("job arguments are sent with #{masked}#{omitted}")
          guarded("stream") { reader.check_for_trimmed_entries }
          threads = [
            loop_thread("stream", 0) do
              reader.step
              deliverer.drain if deliverer.pending.positive?
            end,
            loop_thread("poll", @config.poll_interval_s) { poller.step },
            loop_thread("commands", @config.command_interval_s) { commands.step },
          ]
          threads.each(&:join)
          @logger.info("stopped: #{reader.read_total} stream entries read, #{deliverer.sent} events delivered, #{deliverer.pending} kept in the spool for the next start")
        ensure
          client&.close
        end

        # Not from a signal handler directly (a trap may not take a lock): `Thread.new { runner.stop }`.
        def stop
          @lock.synchronize do
            @stopping = true
            @wake.broadcast
          end
        end

        private

        def configure_sidekiq
          url = @config.redis_url
          ::Sidekiq.configure_client { |config| config.redis = { url: url, size: 5 } }
          ::Sidekiq.logger.level = Logger::WARN
          # Sidekiq's own retry of a job, done here for a retry command, is then recorded like any push.
          Jobwatch::Sidekiq.recorder = Recorder.new(stream: @config.stream, logger: @logger)
          # what the collector sends of a job's arguments, and what such a push records
          Jobwatch::Sidekiq.arguments = JobArguments.new(redact_keys: @config.redact_keys, omit_args: @config.omit_args)
          ::Sidekiq.configure_client do |config|
            config.client_middleware { |chain| chain.add(ClientMiddleware) unless chain.exists?(ClientMiddleware) }
          end
        end

        def loop_thread(name, interval_s)
          Thread.new do
            Thread.current.name = "jobwatch-#{name}"
            until @stopping
              started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
              guarded(name) { yield }
              pause = interval_s - (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started)
              pause = 1.0 if @failing[name] && pause < 1.0
              wait(pause) if pause.positive?
            end
          end
        end

        def guarded(name)
          yield
          @logger.info("#{name}: working again") if @failing.delete(name)
        rescue StandardError => e
          unless @failing[name]
            @logger.error("#{name}: #{e.class}: #{e.message} (at #{Array(e.backtrace).first}); trying again every second")
            @failing[name] = true
          end
        end

        def wait(seconds)
          @lock.synchronize { @wake.wait(@lock, seconds) unless @stopping }
        end

        def redacted(url)
          url.sub(%r{//[^@/]*@}, "//***@")
        end
      end
    end
  end
end
