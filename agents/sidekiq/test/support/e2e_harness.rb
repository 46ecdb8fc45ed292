# The real parts of an end-to-end run: redis-server, the jobwatch service, Sidekiq
# processes running the fixture app, and the collector, each on a free loopback port
# with its own temporary directory and log file. Waits poll with a deadline.
require "fileutils"
require "json"
require "net/http"
require "socket"
require "tmpdir"

module E2E
  REPO = File.expand_path("../../../..", __dir__)
  AGENT = File.expand_path("../..", __dir__)
  ADMIN = { "email" => "e2e@example.com", "password" => "an end-to-end password" }.freeze
  # The job whose arguments are never recorded nor sent: the integration's and the collector's setting.
  OMIT_ARGS = "SignInJob"

  class Timeout < StandardError; end

  module_function

  def free_port
    server = TCPServer.new("127.0.0.1", 0)
    server.addr[1]
  ensure
    server&.close
  end

  # Calls the block until it returns a truthy value; fails naming `what` after timeout_s.
  def wait_for(what, timeout_s: 20, interval_s: 0.2)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout_s
    last = nil
    loop do
      last = yield
      return last if last
      raise Timeout, "timed out after #{timeout_s}s waiting for #{what}" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      sleep interval_s
    end
  end

  def program(name)
    ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).map { |dir| File.join(dir, name) }.find { |path| File.executable?(path) }
  end

  class Spawned
    attr_reader :name, :pid, :log

    # Every process a test started: whatever is still running when the suite ends (a
    # failed start, an interrupted test) is killed with its process group.
    ALL = []

    def initialize(name, argv, env:, log_dir:, chdir:)
      @name = name
      @log = File.join(log_dir, "#{name}.log")
      @pid = Process.spawn(env, *argv, chdir: chdir, out: [@log, "a"], err: [:child, :out], pgroup: true)
      @status = nil
      ALL << self
    end

    def kill_group
      Process.kill("KILL", -@pid) if alive?
    rescue Errno::ESRCH, Errno::EPERM, Errno::ECHILD
      nil
    end

    def alive?
      return false if @status
      @status = Process.wait2(@pid, Process::WNOHANG)&.last
      @status.nil?
    end

    def output
      File.exist?(@log) ? File.read(@log) : ""
    end

    def stop(signal = "TERM", timeout_s: 15)
      return unless alive?
      Process.kill(signal, @pid)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout_s
      while alive?
        if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
          Process.kill("KILL", @pid)
          Process.wait(@pid)
          @status = :killed
          break
        end
        sleep 0.05
      end
    rescue Errno::ESRCH, Errno::ECHILD
      @status = :gone
    end
  end

  # A logged-in HTTP client of the dashboard API.
  class Api
    def initialize(base)
      @uri = URI(base)
      @cookie = nil
    end

    def call(method, path, body = nil, expect: 200)
      request = Net::HTTP.const_get(method.capitalize).new(path)
      request["Cookie"] = @cookie if @cookie
      request["Content-Type"] = "application/json" unless method == "GET"
      request.body = JSON.generate(body) if body
      reply = Net::HTTP.start(@uri.host, @uri.port, open_timeout: 5, read_timeout: 15) { |http| http.request(request) }
      cookie = reply["Set-Cookie"]
      @cookie = cookie.split(";").first if cookie
      parsed = reply.body.nil? || reply.body.empty? ? nil : JSON.parse(reply.body)
      raise "#{method} #{path}: #{reply.code} #{parsed.inspect[0, 500]}" unless Array(expect).include?(reply.code.to_i)
      parsed
    end

    # Sends events as any holder of the connection's API key can.
    def ingest(api_key, events)
      request = Net::HTTP::Post.new("/api/ingest")
      request["Authorization"] = "Bearer #{api_key}"
      request["Content-Type"] = "application/json"
      request.body = JSON.generate("events" => events)
      reply = Net::HTTP.start(@uri.host, @uri.port, open_timeout: 5, read_timeout: 15) { |http| http.request(request) }
      raise "POST /api/ingest: #{reply.code} #{reply.body[0, 500]}" unless reply.code == "200"
      JSON.parse(reply.body)
    end

    def jobs(**filters)
      query = URI.encode_www_form({ limit: 100 }.merge(filters))
      call("GET", "/api/jobs?#{query}")["data"]
    end

    def job(external_id)
      item = jobs.find { |job| job["externalId"] == external_id }
      item && call("GET", "/api/jobs/#{item["id"]}")
    end

    def workers
      call("GET", "/api/workers?limit=100")["data"]
    end

    def queues
      call("GET", "/api/queues?limit=100")["data"]
    end
  end

  # redis-server, jobwatch, one Sidekiq process and the collector, started once for the suite.
  class Cluster
    attr_reader :tmp, :redis_url, :api, :api_key, :sidekiq, :collector, :spool_dir, :jobwatch_base

    def self.missing
      missing = []
      missing << "redis-server (apt-get install redis-server)" unless E2E.program("redis-server")
      missing << "sidekiq (apt-get install ruby-sidekiq)" unless E2E.program("sidekiq")
      missing << "bun (npm install in the repository)" unless File.executable?(File.join(REPO, "node_modules", ".bin", "bun"))
      missing
    end

    # Started once; a failed start is not tried again for every test.
    def self.instance
      raise @failed if @failed
      @instance ||= new.tap(&:start)
    rescue StandardError => e
      @failed ||= e
      raise
    end

    def self.stop_instance
      @instance&.stop
      Spawned::ALL.each(&:kill_group)
    end

    def initialize
      @tmp = Dir.mktmpdir("jobwatch-sidekiq-e2e-")
      @logs = File.join(@tmp, "logs")
      FileUtils.mkdir_p(@logs)
      @redis_port = E2E.free_port
      @redis_url = "redis://127.0.0.1:#{@redis_port}/0"
      @jobwatch_port = E2E.free_port
      @jobwatch_base = "http://127.0.0.1:#{@jobwatch_port}"
      @spool_dir = File.join(@tmp, "spool")
      @processes = []
      @starts = Hash.new(0)
    end

    def start
      redis_dir = File.join(@tmp, "redis")
      FileUtils.mkdir_p(redis_dir)
      spawn("redis", ["redis-server", "--port", @redis_port.to_s, "--bind", "127.0.0.1", "--dir", redis_dir, "--save", "", "--appendonly", "no"], {})
      E2E.wait_for("redis-server to answer") { redis_ping }
      # This process pushes the tests' jobs through the fixture app, integration included.
      ENV["REDIS_URL"] = @redis_url
      ENV["JOBWATCH_OMIT_ARGS"] = OMIT_ARGS
      require File.join(AGENT, "test", "fixtures", "app")
      require "sidekiq/api"
      Sidekiq.logger.level = Logger::WARN
      start_jobwatch
      @api = Api.new(@jobwatch_base)
      @api.call("POST", "/api/auth/login", ADMIN)
      @api_key = @api.call("POST", "/api/connections", { "name" => "sidekiq-e2e" }, expect: 201)["apiKey"]
      @sidekiq = start_sidekiq("sidekiq", queues: %w[default])
      start_collector
    rescue StandardError
      dump_logs
      stop
      raise
    end

    def start_jobwatch
      # REDACT_KEYS=none: jobwatch masks nothing itself, so what a test finds masked the agent masked
      env = { "PORT" => @jobwatch_port.to_s, "HOST" => "127.0.0.1", "DATA_DIR" => File.join(@tmp, "jobwatch-data"), "DAILY_EVENT_LIMIT" => "0",
              "ADMIN_EMAIL" => ADMIN["email"], "ADMIN_PASSWORD" => ADMIN["password"], "REDACT_KEYS" => "none" }
      @jobwatch = spawn("jobwatch", [File.join(REPO, "node_modules", ".bin", "bun"), "src/main.ts"], env, chdir: REPO)
      E2E.wait_for("jobwatch to answer /api/health", timeout_s: 60) { healthy? }
    end

    def stop_jobwatch
      @jobwatch.stop
    end

    def start_sidekiq(name, queues:, concurrency: 3)
      argv = ["sidekiq", "-r", File.join(AGENT, "test", "fixtures", "app.rb"), "-c", concurrency.to_s, "-t", "3"]
      queues.each { |queue| argv.push("-q", queue) }
      process = spawn(name, argv, { "REDIS_URL" => @redis_url, "JOBWATCH_OMIT_ARGS" => OMIT_ARGS })
      E2E.wait_for("#{name} to register with Sidekiq") { sidekiq_process_of(process.pid) }
      process
    end

    def start_collector
      argv = ["ruby", File.join(AGENT, "bin", "jobwatch-sidekiq"), "--redis", @redis_url, "--url", @jobwatch_base, "--api-key", @api_key,
              "--spool-dir", @spool_dir, "--poll-interval", "1", "--process-stale", "8", "--command-interval", "0.5", "--omit-args", OMIT_ARGS]
      @collector = spawn("collector", argv, {})
      # its first delivery: a test's job pushed before the collector is up can run and finish
      # before its first events are read, and a test waiting to see it active would miss it
      E2E.wait_for("the collector to deliver to jobwatch", timeout_s: 60) { @collector.output.include?("the API key belongs to connection") }
    end

    # The Sidekiq process record of a pid, once its first heartbeat is in Redis.
    def sidekiq_process_of(pid)
      Sidekiq::ProcessSet.new.find { |process| process["pid"] == pid }
    rescue StandardError
      nil
    end

    def done?(jid)
      Sidekiq.redis { |conn| conn.sismember("test:done", jid) }
    end

    def spooled_events
      Dir.glob(File.join(@spool_dir, "events", "*.json")).sum { |path| File.basename(path)[/-(\d+)\.json\z/, 1].to_i }
    end

    def logs
      @processes.map { |process| "----- #{process.name} (#{process.log})\n#{process.output[-6000..] || process.output}" }.join("\n")
    end

    def dump_logs
      warn logs
    end

    def stop
      @processes.reverse_each { |process| process.stop("TERM", timeout_s: 10) }
      FileUtils.rm_rf(@tmp) unless ENV["KEEP_E2E_TMP"]
    end

    private

    def spawn(name, argv, env, chdir: AGENT)
      @starts[name] += 1
      label = @starts[name] > 1 ? "#{name}-#{@starts[name]}" : name
      process = Spawned.new(label, argv, env: env, log_dir: @logs, chdir: chdir)
      @processes << process
      process
    end

    def redis_ping
      socket = TCPSocket.new("127.0.0.1", @redis_port)
      socket.write("PING\r\n")
      socket.gets&.start_with?("+PONG")
    rescue SystemCallError
      false
    ensure
      socket&.close
    end

    def healthy?
      raise "jobwatch exited:\n#{@jobwatch.output[-3000..]}" unless @jobwatch.alive?
      Net::HTTP.get_response(URI("#{@jobwatch_base}/api/health")).code == "200"
    rescue SystemCallError, Net::OpenTimeout, EOFError
      false
    end
  end
end
