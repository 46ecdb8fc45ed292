# jobwatch's agent routes as the collector's commands loop sees them, in memory: it
# serves its commands until they are acknowledged, keeps every ack and the capabilities
# reported, and can be made unreachable. For tests that drive the loop without the service.
require "jobwatch/sidekiq/collector/http_client"

class FakeJobwatch
  C = Jobwatch::Sidekiq::Collector

  attr_reader :acks, :capabilities
  attr_accessor :commands, :ack_down, :down, :capabilities_status

  def initialize(commands = [])
    @commands = commands
    @acks = []
    @capabilities = []
    @capabilities_status = 200
    @lock = Mutex.new
  end

  def get(_path)
    raise C::NetworkError, "refused" if down
    @lock.synchronize { C::Response.new(200, { "data" => @commands.dup }, nil) }
  end

  def put(path, body)
    raise C::NetworkError, "refused" if down
    raise ArgumentError, "unexpected PUT #{path}" unless path == "/api/agent/capabilities"
    @capabilities << body
    C::Response.new(capabilities_status, {}, nil)
  end

  def post(_path, body)
    raise C::NetworkError, "reset" if ack_down || down
    @lock.synchronize do
      @acks << body["outcomes"]
      @commands -= @commands.select { |command| body["outcomes"].any? { |o| o["id"] == command["id"] } }
    end
    C::Response.new(200, { "acknowledged" => body["outcomes"].size }, nil)
  end

  def add(command)
    @lock.synchronize { @commands << command }
  end

  # Every outcome acknowledged so far, by command id.
  def outcomes
    @lock.synchronize { @acks.flatten.to_h { |outcome| [outcome["id"], outcome] } }
  end
end
