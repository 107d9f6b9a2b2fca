<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Exception\ConnectionException;
use Lectern\Exception\RedirectLimitException;
use Lectern\Exception\ServiceUnavailableException;
use Lectern\Lectern;
use Lectern\RedirectLoader;
use Lectern\Tests\Support\FakeClock;
use Lectern\Tests\Support\Process;
use Lectern\Tests\Support\ScriptedApi;
use Lectern\Tests\Support\TestServer;
use PHPUnit\Framework\TestCase;

/**
 * The loader against the Lectern test server. Each `new Lectern(...)` here stands for a new PHP
 * process (an FPM request): it starts with nothing in memory, as a real one would.
 */
final class RedirectLoaderTest extends TestCase
{
    private string $cacheFile;

    private FakeClock $clock;

    protected function setUp(): void
    {
        $this->cacheFile = sys_get_temp_dir() . '/lectern-redirects-test-' . bin2hex(random_bytes(6)) . '.json';
        $this->clock = new FakeClock();
    }

    protected function tearDown(): void
    {
        foreach (['', '.pages', '.lock'] as $suffix) {
            @unlink($this->cacheFile . $suffix);
        }
    }

    private static function process(?string $baseUrl = null): Lectern
    {
        $launcher = TestServer::launcher();

        return new Lectern($baseUrl ?? $launcher['baseUrl'], $launcher['keys']['viewer'], maxRetries: 0, timeout: 5);
    }

    private function loader(Lectern $lectern, ?string $cacheFile = null): RedirectLoader
    {
        return new RedirectLoader($lectern, $cacheFile ?? $this->cacheFile, maxAge: 60, clock: $this->clock->time(...));
    }

    public function testItBuildsTheMatcherFromTheActiveRedirectsOfTheApi(): void
    {
        $matcher = (new RedirectLoader(self::process()))->matcher();

        $this->assertSame(['status' => 301, 'location' => '/chain-c?x=1'], $matcher->match('/chain-a?x=1')?->toArray());
        $this->assertSame(['status' => 302, 'location' => '/neu-%C3%BC'], $matcher->match('/%C3%BCber')?->toArray());
        $this->assertNull($matcher->match('/retired'), 'inactive redirects are not loaded');
        $this->assertCount(5, $matcher);
    }

    public function testAFreshCacheFileServesLaterProcessesWithoutAnyRequest(): void
    {
        $this->loader(self::process())->matcher();

        $later = self::process();
        $this->clock->now += 59;
        $matcher = $this->loader($later)->matcher();

        $this->assertSame('/blog', $matcher->match('/blog-old')?->location);
        $this->assertNull($later->lastResponse, 'no request was made');
    }

    public function testAStaleCacheFileIsRevalidatedWithConditionalRequests(): void
    {
        $this->loader(self::process())->matcher();

        $later = self::process();
        $this->clock->now += 61;
        $matcher = $this->loader($later)->matcher();

        $this->assertSame(304, $later->lastResponse?->status, 'the unchanged page came back as a 304');
        $this->assertSame('/pricing', $matcher->match('/promo')?->location);
        $saved = json_decode((string) file_get_contents($this->cacheFile), true);
        $this->assertSame($this->clock->time(), $saved['savedAt'], 'the copy counts as fresh again');
    }

    public function testAProcessKeepsItsMatcherInMemoryWhileItIsFresh(): void
    {
        $lectern = self::process();
        $loader = new RedirectLoader($lectern, null, maxAge: 60, clock: $this->clock->time(...));
        $first = $loader->matcher();
        $requestId = $lectern->lastResponse?->requestId;

        $this->assertSame($first, $loader->matcher());
        $this->assertSame($requestId, $lectern->lastResponse?->requestId, 'no second request');

        $this->clock->now += 60;
        $loader->matcher();
        $this->assertSame(304, $lectern->lastResponse?->status);
    }

    public function testWhileAnotherProcessRefreshesAStaleCopyIsServedWithoutAskingTheApi(): void
    {
        $this->loader(self::process())->matcher();
        $this->clock->now += 120;
        // flock() locks belong to an open file, so a second handle stands for another process.
        $otherProcess = fopen($this->cacheFile . '.lock', 'c');
        $this->assertTrue(flock($otherProcess, LOCK_EX));

        try {
            $later = self::process();
            $matcher = $this->loader($later)->matcher();
        } finally {
            flock($otherProcess, LOCK_UN);
            fclose($otherProcess);
        }

        $this->assertSame('/blog', $matcher->match('/blog-old')?->location);
        $this->assertNull($later->lastResponse, 'no request was made');
    }

    public function testWhenTheApiCannotBeReachedTheOldCopyIsKeptAndTheErrorRecorded(): void
    {
        $this->loader(self::process())->matcher();

        $this->clock->now += 120;
        $loader = $this->loader(self::process('http://127.0.0.1:' . Process::freePort()));
        $matcher = $loader->matcher();

        $this->assertSame('/blog', $matcher->match('/blog-old')?->location);
        $this->assertInstanceOf(ConnectionException::class, $loader->lastError);
        $saved = json_decode((string) file_get_contents($this->cacheFile), true);
        $this->assertSame($this->clock->time(), $saved['savedAt'], 'the next attempt waits another maxAge');
    }

    public function testWithNoCopyAtAllAFailureIsThrown(): void
    {
        $url = ScriptedApi::get()->script([['status' => 503, 'headers' => ['Retry-After' => '5'], 'body' => ScriptedApi::error('service_unavailable', 'Service unavailable')]]);

        $this->expectException(ServiceUnavailableException::class);
        $this->loader(new Lectern($url, 'lk_live_x', maxRetries: 0))->matcher();
    }

    public function testADamagedCacheFileIsIgnored(): void
    {
        file_put_contents($this->cacheFile, '{"format":1,"savedAt":');

        $matcher = $this->loader(self::process())->matcher();

        $this->assertSame('/blog', $matcher->match('/blog-old')?->location);
        $this->assertSame(1, json_decode((string) file_get_contents($this->cacheFile), true)['format'], 'and replaced');
    }

    public function testItRefusesACacheFileInAFolderThatDoesNotExist(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new RedirectLoader(self::process(), '/nonexistent-folder/redirects.json');
    }

    public function testItHoldsAtMostMaxRedirectsAndKeepsItsCopyWhenThereAreMore(): void
    {
        $page = static function (int $number, int $total): array {
            $items = [];
            for ($n = ($number - 1) * 100; $n < min($number * 100, $total); ++$n) {
                $items[] = ['id' => "r$n", 'fromPath' => "/from-$n", 'toPath' => "/to-$n", 'type' => 'permanent', 'isActive' => true,
                    'createdAt' => '2024-01-05T10:00:00Z', 'updatedAt' => '2024-01-05T10:00:00Z'];
            }

            return ['status' => 200, 'body' => json_encode(['data' => $items, 'meta' => ['total' => $total, 'page' => $number, 'pageSize' => 100, 'totalPages' => (int) ceil($total / 100)]], JSON_THROW_ON_ERROR)];
        };
        $api = ScriptedApi::get();
        $url = $api->script([$page(1, 200), $page(2, 200), $page(1, 300), $page(2, 300), $page(3, 300)]);
        $lectern = new Lectern($url, 'lk_live_x', maxRetries: 0, timeout: 5);
        $loader = new RedirectLoader($lectern, $this->cacheFile, maxAge: 60, clock: $this->clock->time(...), maxRedirects: 250);

        $this->assertSame('/to-199', $loader->matcher()->match('/from-199')?->location);
        try {
            $loader->refresh();
            $this->fail('expected a RedirectLimitException');
        } catch (RedirectLimitException $error) {
            $this->assertSame('too_many_redirects', $error->type);
            $this->assertNull($error->status);
            $this->assertSame(250, $error->maxRedirects);
            $this->assertStringContainsString('more than 250 active redirects', $error->getMessage());
        }
        $this->assertCount(5, $api->requests($url));

        // Past maxAge the next request refreshes, finds too many again, and serves the old copy.
        $api2 = $api->script([$page(1, 300), $page(2, 300), $page(3, 300)]);
        $again = new RedirectLoader(new Lectern($api2, 'lk_live_x', maxRetries: 0, timeout: 5), $this->cacheFile, maxAge: 60, clock: $this->clock->time(...), maxRedirects: 250);
        $this->clock->now += 61;
        $this->assertSame('/to-199', $again->matcher()->match('/from-199')?->location);
        $this->assertInstanceOf(RedirectLimitException::class, $again->lastError);
    }
}
