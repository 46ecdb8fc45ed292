# A bounded on-disk queue of event batches for while jobwatch cannot be reached.
#
# One file per batch, named `<sequence>-<event count>.json`, written to a temporary
# name, fsynced and renamed, so a crash leaves whole batches only (files 0600 in a 0700
# directory: they hold the app's job names and errors). Batches are sent
# oldest first; past the byte bound the oldest are dropped and the drop is logged with
# its count (the newest events say what Sidekiq looks like now).
require "json"
require "fileutils"
require_relative "private_files"

module Jobwatch
  module Sidekiq
    module Collector
      class Spool
        BATCH_FILE = /\A(\d{12})-(\d+)\.json\z/

        attr_reader :events, :bytes, :dropped_events

        def initialize(directory, max_bytes, logger)
          @directory = directory
          @max_bytes = max_bytes
          @logger = logger
          @dropped_events = 0
          PrivateFiles.mkdir_p(directory)
          @files = [] # [sequence, events, bytes], oldest first
          Dir.children(directory).each do |name|
            if (match = BATCH_FILE.match(name))
              @files << [match[1].to_i, match[2].to_i, File.size(File.join(directory, name))]
            elsif name.end_with?(".json.tmp")
              File.unlink(File.join(directory, name)) # a write that did not finish
            end
          end
          @files.sort!
          @events = @files.sum { |_, count, _| count }
          @bytes = @files.sum { |_, _, size| size }
          @next = @files.empty? ? 1 : @files.last[0] + 1
          @logger.info("spool: #{@events} events in #{@files.size} batches kept from a previous run; sending them first") unless @files.empty?
        end

        def empty?
          @files.empty?
        end

        def batches
          @files.size
        end

        # encoded_events: JSON texts of single events.
        def append(encoded_events)
          return if encoded_events.empty?
          data = "[#{encoded_events.join(",")}]"
          sequence = @next
          @next += 1
          path = path_of(sequence, encoded_events.size)
          PrivateFiles.open_write("#{path}.tmp") do |file|
            file.write(data)
            file.flush
            file.fsync
          end
          File.rename("#{path}.tmp", path)
          @files << [sequence, encoded_events.size, data.bytesize]
          @events += encoded_events.size
          @bytes += data.bytesize
          enforce_bound
        end

        # [sequence, [encoded event, ...]] of the oldest batch; an unreadable file is dropped and logged.
        def oldest
          until @files.empty?
            sequence, count, = @files.first
            begin
              events = JSON.parse(File.binread(path_of(sequence, count)))
              return [sequence, events.map { |event| JSON.generate(event) }]
            rescue SystemCallError, JSON::ParserError => e
              @logger.error("spool: dropped #{count} events: batch file #{sequence} unreadable (#{e.message})")
              @dropped_events += count
              remove(sequence)
            end
          end
          nil
        end

        def remove(sequence)
          index = @files.index { |seq, _, _| seq == sequence }
          return unless index
          seq, count, size = @files.delete_at(index)
          @events -= count
          @bytes -= size
          begin
            File.unlink(path_of(seq, count))
          rescue Errno::ENOENT
            nil
          end
        end

        private

        def enforce_bound
          while @files.size > 1 && @bytes > @max_bytes
            sequence, count, size = @files.first
            @dropped_events += count
            @logger.error("spool full (#{@max_bytes / (1024 * 1024)} MB bound): dropped the #{count} oldest events (#{size} bytes); " \
                          "#{@dropped_events} dropped since start")
            remove(sequence)
          end
        end

        def path_of(sequence, count)
          File.join(@directory, format("%012d-%d.json", sequence, count))
        end
      end
    end
  end
end
