# The id of the last stream entry whose events are safe (delivered to jobwatch or in
# the spool on disk). Saved atomically (write, fsync, rename) after each batch, so a
# restart, clean or kill -9, resumes right after it: at worst a batch is read twice,
# and jobwatch skips the duplicates.
require "json"
require "fileutils"
require_relative "private_files"

module Jobwatch
  module Sidekiq
    module Collector
      class Checkpoint
        FILE_NAME = "stream-checkpoint.json"
        START = "0-0"
        STREAM_ID = /\A\d+-\d+\z/

        attr_reader :id

        def initialize(directory, stream, logger)
          PrivateFiles.mkdir_p(directory)
          @path = File.join(directory, FILE_NAME)
          @stream = stream
          @logger = logger
          @id = read || START
        end

        def save(id)
          raise ArgumentError, "not a stream id: #{id.inspect}" unless id.is_a?(String) && STREAM_ID.match?(id)
          PrivateFiles.open_write("#{@path}.tmp") do |file|
            file.write(JSON.generate("stream" => @stream, "id" => id))
            file.flush
            file.fsync
          end
          File.rename("#{@path}.tmp", @path)
          @id = id
        end

        # Stream ids compare by their two numbers, not as text.
        def self.compare(left, right)
          left.split("-").map(&:to_i) <=> right.split("-").map(&:to_i)
        end

        private

        def read
          return nil unless File.exist?(@path)
          saved = JSON.parse(File.read(@path))
          if saved["stream"] != @stream
            @logger.warn("checkpoint: saved for stream #{saved["stream"].inspect}, now reading #{@stream.inspect}: starting at its beginning")
            return nil
          end
          id = saved["id"]
          return id if id.is_a?(String) && STREAM_ID.match?(id)
          @logger.error("checkpoint: #{@path} holds no stream id (#{id.inspect}): starting at the stream's beginning")
          nil
        rescue JSON::ParserError, SystemCallError => e
          @logger.error("checkpoint: #{@path} unreadable (#{e.message}): starting at the stream's beginning; jobwatch skips what it already has")
          nil
        end
      end
    end
  end
end
