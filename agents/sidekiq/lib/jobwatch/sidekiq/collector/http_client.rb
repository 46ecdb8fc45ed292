# JSON over HTTP to jobwatch with the API key, keeping one connection open. Anything
# that is not an HTTP answer (refused, reset, timed out, DNS) is a NetworkError, which
# callers treat as "jobwatch unreachable, try again later".
require "json"
require "net/http"
require "openssl"
require "uri"

module Jobwatch
  module Sidekiq
    module Collector
      class NetworkError < StandardError; end

      Response = Struct.new(:status, :body, :retry_after_s) do
        def error_text
          error = body.is_a?(Hash) ? body["error"] : nil
          error.is_a?(Hash) ? "#{error["code"]}: #{error["message"]}" : body.to_s[0, 200]
        end
      end

      class HttpClient
        OPEN_TIMEOUT_S = 3
        READ_TIMEOUT_S = 15

        def initialize(base_url, api_key)
          @uri = URI.parse(base_url)
          @api_key = api_key
          @lock = Mutex.new
          @http = nil
        end

        def get(path)
          request(Net::HTTP::Get.new(path))
        end

        # body: a Hash (sent as JSON) or an already encoded JSON String.
        def post(path, body)
          request(with_body(Net::HTTP::Post.new(path), body))
        end

        def put(path, body)
          request(with_body(Net::HTTP::Put.new(path), body))
        end

        def close
          @lock.synchronize { finish }
        end

        private

        def request(message)
          message["Authorization"] = "Bearer #{@api_key}"
          message["Accept"] = "application/json"
          @lock.synchronize do
            reply = connection.request(message)
            Response.new(reply.code.to_i, parse(reply.body), retry_after(reply["Retry-After"]))
          rescue IOError, SystemCallError, SocketError, Timeout::Error, OpenSSL::SSL::SSLError, Net::HTTPBadResponse, EOFError => e
            finish
            raise NetworkError, "#{e.class}: #{e.message}"
          end
        end

        def with_body(message, body)
          message["Content-Type"] = "application/json"
          message.body = body.is_a?(String) ? body : JSON.generate(body)
          message
        end

        def connection
          return @http if @http&.started?
          http = Net::HTTP.new(@uri.host, @uri.port)
          http.use_ssl = @uri.scheme == "https"
          http.open_timeout = OPEN_TIMEOUT_S
          http.read_timeout = READ_TIMEOUT_S
          http.write_timeout = READ_TIMEOUT_S
          http.keep_alive_timeout = 30
          http.start
          @http = http
        end

        def finish
          @http&.finish if @http&.started?
        rescue StandardError
          nil
        ensure
          @http = nil
        end

        def parse(text)
          return nil if text.nil? || text.empty?
          JSON.parse(text)
        rescue JSON::ParserError
          text
        end

        def retry_after(value)
          value && Float(value, exception: false)
        end
      end
    end
  end
end
