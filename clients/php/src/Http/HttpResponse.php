<?php

declare(strict_types=1);

namespace Lectern\Http;

/** A raw HTTP response: what an {@see HttpClient} hands back. */
final class HttpResponse
{
    /**
     * @param array<string, string> $headers Header values by lower-case name (a repeated header's
     *                                       values joined with `, `).
     */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }

    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)] ?? null;
    }

    /**
     * Header lines (`Name: value`, status lines and blank lines among them) as a name → value map:
     * the form both curl's header callback and the stream wrapper's `$http_response_header` give.
     * Only lines after the last status line count, so an interim `100 Continue` is left out.
     *
     * @param list<string> $lines
     *
     * @return array{int, array<string, string>} the status and the headers
     */
    public static function parseHeaderLines(array $lines): array
    {
        $status = 0;
        $headers = [];
        foreach ($lines as $line) {
            $line = rtrim($line, "\r\n");
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $m) === 1) {
                $status = (int) $m[1];
                $headers = [];
                continue;
            }
            $colon = strpos($line, ':');
            if ($colon === false) {
                continue;
            }
            $name = strtolower(trim(substr($line, 0, $colon)));
            $value = trim(substr($line, $colon + 1));
            $headers[$name] = isset($headers[$name]) ? $headers[$name] . ', ' . $value : $value;
        }

        return [$status, $headers];
    }
}
