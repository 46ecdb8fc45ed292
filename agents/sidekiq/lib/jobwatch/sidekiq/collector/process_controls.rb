# Quiet and stop a Sidekiq process, the way Sidekiq Web does: the signal (TSTP to quiet,
# TERM to stop) goes into the process's signal list (`<identity>-signals`, kept 60 s),
# which the process reads at its next heartbeat (every 5 s in Sidekiq 6, 10 s in 7) and
# sends itself. The collector then watches for Sidekiq to act before it acknowledges:
#
# - quiet is done when the process beats as quiet (it fetches no new jobs; the running
#   ones finish) or has left;
# - stop is done when the process has left Sidekiq's process set (a clean exit: it
#   stopped fetching, waited up to its timeout (-t) for running jobs, pushed back the
#   rest). A process that took the signal but is still finishing its jobs when the wait
#   ends is done with that said.
#
# A signal not taken within the wait (the process hangs, or died without leaving the
# set) is taken back out of the list, so the answer `failed` is true: nothing was done.
# The command is left unacknowledged while the collector waits (jobwatch sends it again
# at each poll and the check goes on), so other commands are not held up.
require "sidekiq/api"
require_relative "command_input"
require_relative "command_outcome"

module Jobwatch
  module Sidekiq
    module Collector
      class ProcessControls
        TYPES = %w[worker.quiet worker.stop].freeze
        SIGNALS = { "worker.quiet" => "TSTP", "worker.stop" => "TERM" }.freeze
        # Sidekiq drops a signal no process took after 60 s; a heartbeat comes every 5 or 10 s.
        WAIT_S = 30
        # Waits for commands jobwatch stopped sending (expired) are forgotten past this.
        WAITING_MAX = 1000

        Signalled = Struct.new(:identity, :type, :deadline)

        def initialize(logger:, wait_s: WAIT_S, clock: -> { ::Process.clock_gettime(::Process::CLOCK_MONOTONIC) })
          @logger = logger
          @wait_s = wait_s
          @clock = clock
          @signalled = {}
        end

        # The outcome, or WAITING while the process has not acted on its signal yet.
        def carry_out(id, type, command)
          signalled = @signalled[id]
          return confirm(id, signalled) if signalled
          identity = command["workerId"]
          problem = CommandInput.process_problem(identity)
          return CommandOutcome.failed(id, problem) if problem
          process = live_process(identity)
          unless process
            return CommandOutcome.failed(id, "not found: no live Sidekiq process #{identity.inspect} (it stopped, or it is not one of this Redis's): nothing was done")
          end
          return CommandOutcome.done(id, "the process was already quiet") if type == "worker.quiet" && quiet?(process)
          type == "worker.quiet" ? process.quiet! : process.stop!
          @logger.info("commands: #{SIGNALS.fetch(type)} put in Sidekiq process #{identity}'s signal list; waiting up to #{@wait_s}s for it to act")
          @signalled.shift while @signalled.size >= WAITING_MAX
          @signalled[id] = Signalled.new(identity, type, @clock.call + @wait_s)
          confirm(id, @signalled[id])
        end

        private

        def confirm(id, signalled)
          process = live_process(signalled.identity)
          acted = signalled.type == "worker.stop" ? process.nil? : process.nil? || quiet?(process)
          return finish(id, CommandOutcome.done(id, process.nil? ? "the process has stopped" : nil)) if acted
          return WAITING if @clock.call < signalled.deadline
          signal = SIGNALS.fetch(signalled.type)
          withdrawn = ::Sidekiq.redis { |conn| conn.call("LREM", "#{signalled.identity}-signals", "1", signal) }.to_i == 1
          if withdrawn
            return finish(id, CommandOutcome.failed(id, "Sidekiq process #{signalled.identity} did not take the #{signal} signal within #{@wait_s}s " \
                                                        "(it is hanging, or stopped without leaving Sidekiq's process set): withdrawn, nothing was done"))
          end
          return finish(id, CommandOutcome.done(id, "the process took the signal")) if signalled.type == "worker.quiet"
          finish(id, CommandOutcome.done(id, "the process took the stop signal and is finishing its running jobs before it exits " \
                                             "(it waits up to its shutdown timeout, -t)"))
        end

        def finish(id, outcome)
          @signalled.delete(id)
          outcome
        end

        # Sidekiq's record of the process `identity` (literally equal), or nil.
        def live_process(identity)
          ::Sidekiq::ProcessSet.new.find { |process| process["identity"] == identity }
        end

        def quiet?(process)
          process["quiet"].to_s == "true"
        end
      end
    end
  end
end
