<?php

declare(strict_types=1);

namespace Lectern\Http;

use Lectern\Exception\ConnectionException;
use Lectern\Exception\ServerException;

/**
 * {@see HttpClient} over PHP's stream functions (`fopen` with an `http` stream context), for hosts
 * without ext-curl. Needs `allow_url_fopen` on; `https://` needs ext-openssl.
 *
 * The wrapper's own `timeout` bounds each read, not the request, so the body is read a chunk at a
 * time against the attempt's deadline, and refused past `$maxResponseBytes`. No compression is
 * asked for, so the bytes counted are the bytes held.
 */
final class StreamHttpClient implements HttpClient
{
    private const CHUNK = 65536;

    public function __construct(private readonly int $maxResponseBytes = HttpClient::DEFAULT_MAX_RESPONSE_BYTES)
    {
        if ($maxResponseBytes < 1) {
            throw new \InvalidArgumentException('StreamHttpClient: maxResponseBytes must be at least 1');
        }
    }

    public function send(string $method, string $url, array $headers, float $timeout): HttpResponse
    {
        if (!filter_var(\ini_get('allow_url_fopen'), FILTER_VALIDATE_BOOLEAN)) {
            throw new \LogicException('StreamHttpClient needs allow_url_fopen=On (or install ext-curl)');
        }
        $deadline = microtime(true) + $timeout;
        $headerLines = ['Connection: close'];
        foreach ($headers as $name => $value) {
            $headerLines[] = $name . ': ' . $value;
        }
        $context = stream_context_create([
            'http' => [
                'method' => $method,
                'header' => $headerLines,
                // Error statuses are responses to read, not failures of the request.
                'ignore_errors' => true,
                'follow_location' => 0,
                'max_redirects' => 1,
                'timeout' => $timeout,
                // HTTP/1.1 (the wrapper decodes chunked bodies) with `Connection: close`.
                'protocol_version' => 1.1,
            ],
        ]);
        error_clear_last();
        // The wrapper reports refused connections and timeouts as warnings; they become the exception below.
        $stream = @fopen($url, 'rb', false, $context);
        if ($stream === false) {
            $error = error_get_last()['message'] ?? 'no response';
            throw $this->connectionFailed($url, preg_replace('/^fopen\([^)]*\): /', '', $error) ?? $error);
        }
        try {
            $lines = stream_get_meta_data($stream)['wrapper_data'] ?? [];
            if (!\is_array($lines) || $lines === []) {
                throw $this->connectionFailed($url, 'no response');
            }
            /** @var list<string> $lines */
            [$status, $parsed] = HttpResponse::parseHeaderLines($lines);
            $body = '';
            while (!feof($stream)) {
                $remaining = $deadline - microtime(true);
                if ($remaining <= 0) {
                    throw $this->timedOut($url, $timeout);
                }
                stream_set_timeout($stream, (int) $remaining, (int) (fmod($remaining, 1.0) * 1_000_000));
                $chunk = fread($stream, self::CHUNK);
                if (stream_get_meta_data($stream)['timed_out']) {
                    throw $this->timedOut($url, $timeout);
                }
                if ($chunk === false) {
                    throw $this->connectionFailed($url, 'the response broke off');
                }
                if (\strlen($body) + \strlen($chunk) > $this->maxResponseBytes) {
                    throw new ServerException(
                        \sprintf('The response of Lectern at %s is larger than maxResponseBytes (%d bytes)', self::origin($url), $this->maxResponseBytes),
                        'unexpected_response',
                        $status ?: null,
                        $parsed['x-request-id'] ?? null,
                    );
                }
                $body .= $chunk;
            }
        } finally {
            fclose($stream);
        }

        return new HttpResponse($status, $parsed, $body);
    }

    private function timedOut(string $url, float $timeout): ConnectionException
    {
        return new ConnectionException(\sprintf('Lectern at %s did not answer within %s s', self::origin($url), $timeout), 'connection_error');
    }

    private function connectionFailed(string $url, string $reason): ConnectionException
    {
        return new ConnectionException(\sprintf('Could not reach Lectern at %s: %s', self::origin($url), $reason), 'connection_error');
    }

    /** Scheme, host and port only: an error message should not carry query strings. */
    private static function origin(string $url): string
    {
        $parts = parse_url($url);

        return ($parts['scheme'] ?? 'http') . '://' . ($parts['host'] ?? '') . (isset($parts['port']) ? ':' . $parts['port'] : '');
    }
}
