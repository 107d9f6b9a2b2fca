<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Exception\AuthenticationException;
use Lectern\Exception\ConnectionException;
use Lectern\Exception\LecternException;
use Lectern\Exception\NotFoundException;
use Lectern\Exception\ServerException;
use Lectern\Http\CachedResponse;
use Lectern\Http\CurlHttpClient;
use Lectern\Http\HttpClient;
use Lectern\Http\MemoryResponseCache;
use Lectern\Http\StreamHttpClient;
use Lectern\Lectern;
use Lectern\Tests\Support\Process;
use Lectern\Tests\Support\ScriptedApi;
use PHPUnit\Framework\TestCase;

/** What goes over the wire and what comes back, with both HTTP back-ends (curl and PHP streams). */
final class TransportTest extends TestCase
{
    private const KEY = 'lk_live_transporttestkey0000000000000000';

    /** @return iterable<string, array{HttpClient}> */
    public function httpClients(): iterable
    {
        // Without ext-curl the client runs on streams alone, and so do these tests.
        if (\extension_loaded('curl')) {
            yield 'curl' => [new CurlHttpClient()];
        }
        yield 'streams' => [new StreamHttpClient()];
    }

    private static function client(string $baseUrl, HttpClient $http, float $timeout = 5.0): Lectern
    {
        return new Lectern($baseUrl, self::KEY, maxRetries: 0, timeout: $timeout, httpClient: $http);
    }

    /** @dataProvider httpClients */
    public function testItSendsTheKeyAsABearerTokenAndBooleansAsTrueAndFalse(HttpClient $http): void
    {
        $api = ScriptedApi::get();
        $url = $api->script([
            ['status' => 200, 'body' => ScriptedApi::formsPage('form_a')],
            ['status' => 200, 'body' => ScriptedApi::formsPage()],
        ]);
        $lectern = self::client($url, $http);

        $lectern->forms->list(page: 1, pageSize: 50, active: true);
        $lectern->pages->list(published: false);

        [$first, $second] = $api->requests($url);
        $this->assertSame('/api/v1/forms?page=1&pageSize=50&active=true', $first['uri']);
        $this->assertSame('/api/v1/page-builder?published=false', $second['uri']);
        $this->assertSame('Bearer ' . self::KEY, $first['headers']['authorization']);
        $this->assertSame('application/json', $first['headers']['accept']);
        $this->assertStringStartsWith('lectern-php/', $first['headers']['user-agent']);
    }

    /** @dataProvider httpClients */
    public function testItEncodesTheFormIdAsOnePathSegment(HttpClient $http): void
    {
        $api = ScriptedApi::get();
        $url = $api->script([['status' => 404, 'body' => ScriptedApi::error('resource_not_found', "Form 'a/b?c' not found")]]);

        try {
            self::client($url, $http)->forms->submissions('a/b?c');
            $this->fail('expected a NotFoundException');
        } catch (NotFoundException $error) {
            $this->assertSame("Form 'a/b?c' not found", $error->getMessage());
        }
        $this->assertSame('/api/v1/forms/a%2Fb%3Fc/submissions', $api->requests($url)[0]['uri']);
    }

    /** @dataProvider httpClients */
    public function testItRevalidatesARememberedPageAndReusesItsBodyOn304(HttpClient $http): void
    {
        $api = ScriptedApi::get();
        $url = $api->script([
            ['status' => 200, 'headers' => ['ETag' => '"v1"'], 'body' => ScriptedApi::formsPage('form_a', 'form_b')],
            ['status' => 304, 'headers' => ['ETag' => '"v1"', 'X-Request-Id' => 'req_304']],
        ]);
        $lectern = self::client($url, $http);

        $first = $lectern->forms->list();
        $second = $lectern->forms->list();

        $this->assertEquals($first, $second);
        $this->assertSame(304, $lectern->lastResponse->status);
        $this->assertSame('req_304', $lectern->lastResponse->requestId);
        $requests = $api->requests($url);
        $this->assertArrayNotHasKey('if-none-match', $requests[0]['headers']);
        $this->assertSame('"v1"', $requests[1]['headers']['if-none-match']);
    }

    public function testTheRememberedPagesAreBoundedLeastRecentlyUsedFirst(): void
    {
        $cache = new MemoryResponseCache(2);
        $cache->set('a', new CachedResponse('"a"', 'A'));
        $cache->set('b', new CachedResponse('"b"', 'B'));
        $cache->get('a');
        $cache->set('c', new CachedResponse('"c"', 'C'));

        $this->assertSame(2, $cache->count());
        $this->assertNull($cache->get('b'), 'b was used least recently');
        $this->assertSame('A', $cache->get('a')?->body);
        $this->assertSame('C', $cache->get('c')?->body);
    }

    /** @dataProvider httpClients */
    public function testItReadsTheRateLimitHeadersAndForgetsThemWhenAResponseHasNone(HttpClient $http): void
    {
        $url = ScriptedApi::get()->script([
            ['status' => 200, 'headers' => ['X-RateLimit-Limit' => '1000', 'X-RateLimit-Remaining' => '997', 'X-RateLimit-Reset' => '1700003600'], 'body' => ScriptedApi::formsPage()],
            ['status' => 401, 'body' => ScriptedApi::error('invalid_api_key', 'Invalid API key')],
        ]);
        $lectern = self::client($url, $http);

        $lectern->forms->list();
        $this->assertSame([1000, 997, 1700003600], [$lectern->lastResponse->rateLimit->limit, $lectern->lastResponse->rateLimit->remaining, $lectern->lastResponse->rateLimit->reset]);
        $this->assertSame(1000, $lectern->getRateLimit()?->limit);

        try {
            $lectern->forms->list();
        } catch (AuthenticationException) {
        }
        $this->assertSame(401, $lectern->lastResponse->status);
        $this->assertNull($lectern->lastResponse->rateLimit);
    }

    /** @dataProvider httpClients */
    public function testItReportsThePhraseFormOfAnErrorByItsCode(HttpClient $http): void
    {
        $url = ScriptedApi::get()->script([
            ['status' => 401, 'headers' => ['X-Request-Id' => 'req_phrase'], 'body' => ScriptedApi::error('API key inactive', 'This API key has been deactivated')],
        ]);

        try {
            self::client($url, $http)->pages->list();
            $this->fail('expected an AuthenticationException');
        } catch (AuthenticationException $error) {
            $this->assertSame('api_key_inactive', $error->getType());
            $this->assertSame(401, $error->getHttpStatus());
            $this->assertSame(401, $error->getCode());
            $this->assertSame('req_phrase', $error->getRequestId());
            $this->assertSame('This API key has been deactivated', $error->getMessage());
        }
    }

    /** @dataProvider httpClients */
    public function testAProxysHtmlErrorPageIsAServerExceptionOfAnUnexpectedResponse(HttpClient $http): void
    {
        $url = ScriptedApi::get()->script([
            ['status' => 502, 'headers' => ['Content-Type' => 'text/html'], 'body' => '<html><body>Bad Gateway</body></html>'],
        ]);

        try {
            self::client($url, $http)->redirects->list();
            $this->fail('expected a ServerException');
        } catch (ServerException $error) {
            $this->assertSame('unexpected_response', $error->type);
            $this->assertSame(502, $error->status);
            $this->assertSame('Unexpected HTTP 502 response from Lectern', $error->getMessage());
        }
    }

    /** @dataProvider httpClients */
    public function testASuccessThatIsNotTheApisListIsAServerException(HttpClient $http): void
    {
        $url = ScriptedApi::get()->script([
            ['status' => 200, 'body' => '{"hello":"world"}'],
            ['status' => 200, 'body' => 'not json'],
        ]);
        $lectern = self::client($url, $http);

        foreach (['a JSON object of another shape', 'a body that is not JSON'] as $what) {
            try {
                $lectern->forms->list();
                $this->fail("expected a ServerException for $what");
            } catch (ServerException $error) {
                $this->assertSame('unexpected_response', $error->type, $what);
                $this->assertSame(200, $error->status, $what);
            }
        }
    }

    /** @dataProvider httpClients */
    public function testARefusedConnectionIsAConnectionExceptionThatNeverShowsTheKey(HttpClient $http): void
    {
        $port = Process::freePort();

        try {
            self::client("http://127.0.0.1:$port", $http)->forms->list(active: true);
            $this->fail('expected a ConnectionException');
        } catch (ConnectionException $error) {
            $this->assertSame('connection_error', $error->getType());
            $this->assertNull($error->status);
            $this->assertStringContainsString("127.0.0.1:$port", $error->getMessage());
            $this->assertStringNotContainsString(self::KEY, $error->getMessage());
            $this->assertInstanceOf(LecternException::class, $error);
        }
    }

    /** @dataProvider httpClients */
    public function testAnAnswerSlowerThanTheTimeoutIsAConnectionException(HttpClient $http): void
    {
        $url = ScriptedApi::get()->script([['status' => 200, 'delay' => 1.5, 'body' => ScriptedApi::formsPage()]]);

        $this->expectException(ConnectionException::class);
        self::client($url, $http, timeout: 0.5)->forms->list();
    }

    public function testTheClientNeverShowsItsKeyWhenDumped(): void
    {
        $lectern = new Lectern('https://content.example.com', self::KEY);

        $this->assertStringNotContainsString(self::KEY, print_r($lectern, true));
    }

    public function testItRefusesABaseUrlThatIsNotAnHttpUrl(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        $this->expectExceptionMessage('baseUrl must be an http(s) URL');
        new Lectern('content.example.com', self::KEY);
    }

    /** @dataProvider httpClients */
    public function testTheTimeoutBoundsTheWholeAttemptWhileTheBodyTricklesIn(HttpClient $http): void
    {
        $url = ScriptedApi::get()->script([['status' => 200, 'body' => ScriptedApi::formsPage(), 'trickle' => ['every' => 0.2, 'times' => 25]]]);

        $this->expectException(ConnectionException::class);
        $this->expectExceptionMessageMatches('/within 1 s|timed out|Operation timed out/i');
        self::client($url, $http, timeout: 1.0)->forms->list();
    }

    /** @requires extension curl */
    public function testCurlRefusesAGzipBodyLargerThanTheCapOnceInflated(): void
    {
        // About 40 KiB on the wire, 40 MiB once inflated: over the default cap of 32 MiB.
        $page = json_encode(['data' => [], 'meta' => ['total' => 0, 'page' => 1, 'pageSize' => 20, 'totalPages' => 0], 'padding' => str_repeat(' ', 40 << 20)], JSON_THROW_ON_ERROR);
        $compressed = (string) gzencode($page, 9);
        unset($page);
        $url = ScriptedApi::get()->script([[
            'status' => 200,
            'headers' => ['Content-Type' => 'application/json', 'Content-Encoding' => 'gzip', 'X-Request-Id' => 'bomb'],
            'bodyBase64' => base64_encode($compressed),
        ]]);

        try {
            (new Lectern($url, self::KEY, maxRetries: 0))->forms->list();
            $this->fail('expected a ServerException');
        } catch (ServerException $error) {
            $this->assertSame('unexpected_response', $error->type);
            $this->assertSame(200, $error->status);
            $this->assertSame('bomb', $error->requestId);
            $this->assertStringContainsString('larger than maxResponseBytes (33554432 bytes) once decompressed', $error->getMessage());
        }
    }

    public function testStreamsRefuseABodyLargerThanTheirCap(): void
    {
        $page = json_encode(['data' => [], 'meta' => ['total' => 0, 'page' => 1, 'pageSize' => 20, 'totalPages' => 0], 'padding' => str_repeat(' ', 2 << 20)], JSON_THROW_ON_ERROR);
        $url = ScriptedApi::get()->script([['status' => 200, 'body' => $page]]);

        try {
            self::client($url, new StreamHttpClient(1 << 20))->forms->list();
            $this->fail('expected a ServerException');
        } catch (ServerException $error) {
            $this->assertSame('unexpected_response', $error->type);
            $this->assertStringContainsString('larger than maxResponseBytes (1048576 bytes)', $error->getMessage());
        }
    }

    public function testAllStopsAtTheFirstPagesTotalThoughLaterPagesAnnounceMore(): void
    {
        $api = ScriptedApi::get();
        $pages = [];
        for ($number = 1; $number <= 10; ++$number) {
            $pages[] = ['status' => 200, 'body' => json_encode([
                'data' => [['id' => "form_{$number}_0", 'title' => 'A', 'description' => null], ['id' => "form_{$number}_1", 'title' => 'B', 'description' => null]],
                'meta' => ['total' => 2 * $number + 2, 'page' => $number, 'pageSize' => 2, 'totalPages' => $number + 1],
            ], JSON_THROW_ON_ERROR)];
        }
        $url = $api->script($pages);

        $seen = [];
        foreach (self::client($url, new StreamHttpClient())->forms->all(pageSize: 2) as $form) {
            $seen[] = $form->id;
            if (\count($seen) > 50) {
                break;
            }
        }

        $this->assertSame(['form_1_0', 'form_1_1', 'form_2_0', 'form_2_1'], $seen);
        $this->assertCount(2, $api->requests($url));
    }
}
