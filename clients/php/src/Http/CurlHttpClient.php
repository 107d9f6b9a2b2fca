<?php

declare(strict_types=1);

namespace Lectern\Http;

use Lectern\Exception\ConnectionException;

/** {@see HttpClient} over ext-curl; one handle is reused, so keep-alive connections are too. */
final class CurlHttpClient implements HttpClient
{
    private ?\CurlHandle $handle = null;

    public function __construct(private readonly float $connectTimeout = 10.0)
    {
        if (!\extension_loaded('curl')) {
            throw new \LogicException('CurlHttpClient needs ext-curl; use StreamHttpClient instead');
        }
    }

    public function send(string $method, string $url, array $headers, float $timeout): HttpResponse
    {
        $this->handle ??= curl_init();
        $handle = $this->handle;
        curl_reset($handle);
        $lines = [];
        $headerLines = [];
        foreach ($headers as $name => $value) {
            $headerLines[] = $name . ': ' . $value;
        }
        curl_setopt_array($handle, [
            CURLOPT_URL => $url,
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_NOBODY => $method === 'HEAD',
            CURLOPT_HTTPHEADER => $headerLines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false,
            // An empty string asks for every encoding curl can decode (gzip, br) and decodes it.
            CURLOPT_ENCODING => '',
            CURLOPT_CONNECTTIMEOUT_MS => (int) ceil(min($this->connectTimeout, $timeout) * 1000),
            CURLOPT_TIMEOUT_MS => (int) ceil($timeout * 1000),
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$lines): int {
                $lines[] = $line;

                return \strlen($line);
            },
        ]);
        $body = curl_exec($handle);
        if ($body === false || !\is_string($body)) {
            $message = curl_error($handle);
            $code = curl_errno($handle);
            throw new ConnectionException(
                \sprintf('Could not reach Lectern at %s: %s (curl error %d)', self::origin($url), $message, $code),
                'connection_error',
            );
        }
        [$status, $parsed] = HttpResponse::parseHeaderLines($lines);

        return new HttpResponse($status ?: (int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE), $parsed, $body);
    }

    /** Scheme, host and port only: an error message should not carry query strings. */
    private static function origin(string $url): string
    {
        $parts = parse_url($url);

        return ($parts['scheme'] ?? 'http') . '://' . ($parts['host'] ?? '') . (isset($parts['port']) ? ':' . $parts['port'] : '');
    }
}
