<?php

declare(strict_types=1);

namespace Lectern\Tests;

use Lectern\Tests\Support\PhpServer;
use Lectern\Tests\Support\Process;
use Lectern\Tests\Support\TestServer;
use PHPUnit\Framework\TestCase;

/**
 * End to end: a front controller calling `Lectern\applyRedirects()` (fixtures/front.php), served by
 * PHP's built-in web server, answers every case of spec/redirect-cases.json over real HTTP.
 */
final class FrontControllerTest extends TestCase
{
    private static ?PhpServer $fromCases = null;

    public static function tearDownAfterClass(): void
    {
        self::$fromCases?->stop();
        self::$fromCases = null;
    }

    /** @return iterable<string, array{string, array{status: int, location: string}|null, string|null}> */
    public function cases(): iterable
    {
        foreach (TestServer::spec('redirect-cases.json')['cases'] as $case) {
            yield $case['name'] => [$case['target'], $case['expect'], $case['skip']['php'] ?? null];
        }
    }

    /**
     * @dataProvider cases
     *
     * @param array{status: int, location: string}|null $expect
     */
    public function testTheFrontControllerAnswersEachCaseOverHttp(string $target, ?array $expect, ?string $skip): void
    {
        if ($skip !== null) {
            $this->markTestSkipped($skip);
        }
        self::$fromCases ??= new PhpServer(__DIR__ . '/fixtures/front.php', ['LECTERN_REDIRECTS' => TestServer::repositoryRoot() . '/spec/redirect-cases.json']);
        // A browser sends non-ASCII bytes percent-encoded (and PHP's built-in server refuses raw ones);
        // decoding once gives the same path, so the expected answer is the same.
        $sent = preg_replace_callback('/[\x80-\xFF ]/', static fn (array $m) => rawurlencode($m[0]), $target);

        [$status, $location, $body] = self::$fromCases->get($sent);

        if ($expect === null) {
            $this->assertSame(200, $status, "no redirect for $target, got $status $location");
            $this->assertNull($location);
            $this->assertSame('served ' . $sent, $body, 'the site served the request');
        } else {
            $this->assertSame([$expect['status'], $expect['location']], [$status, $location]);
            $this->assertSame('', $body, 'nothing after the redirect');
        }
    }

    public function testAFrontControllerLoadsTheRedirectsFromLecternThroughItsCacheFile(): void
    {
        $launcher = TestServer::launcher();
        $cacheFile = sys_get_temp_dir() . '/lectern-front-' . bin2hex(random_bytes(6)) . '.json';
        $server = new PhpServer(__DIR__ . '/fixtures/front.php', [
            'LECTERN_BASE_URL' => $launcher['baseUrl'],
            'LECTERN_API_KEY' => $launcher['keys']['viewer'],
            'LECTERN_CACHE_FILE' => $cacheFile,
        ]);
        try {
            $this->assertSame([301, '/chain-c?utm=x'], \array_slice($server->get('/chain-a?utm=x'), 0, 2));
            $this->assertFileExists($cacheFile);
            $this->assertSame([302, '/neu-%C3%BC'], \array_slice($server->get('/%C3%BCber'), 0, 2));
            $this->assertSame([200, null, 'served /retired'], $server->get('/retired'));
            foreach (['', '.pages'] as $suffix) {
                $this->assertStringNotContainsString($launcher['keys']['viewer'], (string) file_get_contents($cacheFile . $suffix), 'the cache files never hold the key');
            }
        } finally {
            $server->stop();
            foreach (['', '.pages', '.lock'] as $suffix) {
                @unlink($cacheFile . $suffix);
            }
        }
    }

    public function testItRefusesToRedirectAfterOutputHasStartedAndSaysWhere(): void
    {
        $server = new PhpServer(__DIR__ . '/fixtures/front.php', [
            'LECTERN_REDIRECTS' => TestServer::repositoryRoot() . '/spec/redirect-cases.json',
            'LECTERN_PRINT_FIRST' => '1',
        ], ['output_buffering' => '0', 'display_errors' => '1']);
        // Output buffering would hold the early output back and let the headers through: it is off here.
        try {
            [$status, $location, $body] = $server->get('/old');
        } finally {
            $server->stop();
        }

        $this->assertNull($location);
        $this->assertSame(200, $status, 'the status line went out with the early output');
        $this->assertStringContainsString('LogicException', $body);
        $this->assertStringContainsString('output started at ' . __DIR__ . '/fixtures/front.php:', $body);
    }

    public function testTheAbsoluteFormAProxySendsIsMatchedByItsPath(): void
    {
        self::$fromCases ??= new PhpServer(__DIR__ . '/fixtures/front.php', ['LECTERN_REDIRECTS' => TestServer::repositoryRoot() . '/spec/redirect-cases.json']);

        $this->assertSame([301, '/new?a=1'], \array_slice(self::$fromCases->get('http://example.com/old?a=1'), 0, 2));
    }

    /**
     * The README's front controller (examples/public/index.php), laid out as a site would have it
     * (public/, vendor/, var/), and "the site" after it: what runs once the example did not exit.
     *
     * @return array{PhpServer, string} the server and the site's folder
     */
    private static function exampleSite(string $lecternUrl, string $apiKey): array
    {
        $root = sys_get_temp_dir() . '/lectern-example-' . bin2hex(random_bytes(6));
        mkdir($root . '/public', 0777, true);
        mkdir($root . '/vendor');
        mkdir($root . '/var');
        copy(\dirname(__DIR__) . '/examples/public/index.php', $root . '/public/index.php');
        file_put_contents($root . '/vendor/autoload.php', '<?php require ' . var_export(\dirname(__DIR__) . '/autoload.php', true) . ';');
        file_put_contents($root . '/site.php', '<?php require __DIR__ . "/public/index.php"; echo "served ", $_SERVER["REQUEST_URI"];');
        $server = new PhpServer(
            $root . '/site.php',
            ['LECTERN_URL' => $lecternUrl, 'LECTERN_API_KEY' => $apiKey],
            ['log_errors' => '1', 'error_log' => $root . '/error.log', 'display_errors' => '0'],
        );

        return [$server, $root];
    }

    private static function remove(string $root): void
    {
        foreach (['public/index.php', 'vendor/autoload.php', 'site.php', 'error.log', 'var/lectern-redirects.json', 'var/lectern-redirects.json.pages', 'var/lectern-redirects.json.lock'] as $file) {
            @unlink("$root/$file");
        }
        array_map('unlink', glob("$root/var/.lectern-redirects-*") ?: []);
        foreach (['public', 'vendor', 'var', ''] as $folder) {
            @rmdir("$root/$folder");
        }
    }

    public function testTheReadmeShowsTheExampleFrontControllerAsItIsTested(): void
    {
        $example = (string) file_get_contents(\dirname(__DIR__) . '/examples/public/index.php');
        $readme = (string) file_get_contents(\dirname(__DIR__) . '/README.md');

        $this->assertStringContainsString("```php\n" . $example . "```", $readme);
    }

    public function testTheExampleFrontControllerServesTheSiteWhenLecternIsUnreachableAndThereIsNoCopyYet(): void
    {
        [$server, $root] = self::exampleSite('http://127.0.0.1:' . Process::freePort(), 'lk_live_x');
        try {
            $this->assertSame([200, null, 'served /chain-a'], $server->get('/chain-a'));
            $this->assertSame([200, null, 'served /old?x=1'], $server->get('/old?x=1'));
        } finally {
            $server->stop();
            $log = (string) @file_get_contents("$root/error.log");
            self::remove($root);
        }
        $this->assertStringContainsString('Lectern redirects unavailable: Could not reach Lectern at http://127.0.0.1:', $log);
    }

    public function testTheExampleFrontControllerAppliesLecternsRedirects(): void
    {
        $launcher = TestServer::launcher();
        [$server, $root] = self::exampleSite($launcher['baseUrl'], $launcher['keys']['admin']);
        try {
            $this->assertSame([301, '/chain-c?utm=x', ''], $server->get('/chain-a?utm=x'));
            $this->assertSame([200, null, 'served /retired'], $server->get('/retired'));
        } finally {
            $server->stop();
            self::remove($root);
        }
    }
}
