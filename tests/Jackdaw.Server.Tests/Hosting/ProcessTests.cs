using System.Net;
using System.Net.Sockets;
using Jackdaw.Server.Tests.Infrastructure;

namespace Jackdaw.Server.Tests.Hosting;

public class ProcessTests
{
    private static readonly TimeSpan StartTimeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task SigtermShutsDownGracefullyWithExitCodeZero()
    {
        using var data = new TempFolder();
        using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        var address = await server.WaitForAddressAsync(StartTimeout);
        using (var client = new HttpClient { BaseAddress = address })
        using (var response = await client.GetAsync("/build/version"))
        {
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        }

        server.SendSigterm();
        Assert.Equal(0, await server.WaitForExitAsync(TimeSpan.FromSeconds(30)));
        Assert.Contains("Application is shutting down", server.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task EnvironmentVariablesConfigureDataDirAndUrls()
    {
        using var data = new TempFolder();
        var dataDir = Path.Combine(data.Path, "from-env");
        using var server = ServerProcess.Start(string.Empty, new Dictionary<string, string>
        {
            ["JACKDAW_DATADIR"] = dataDir,
            ["JACKDAW_URLS"] = "http://127.0.0.1:0",
        });
        var address = await server.WaitForAddressAsync(StartTimeout);
        Assert.Equal("127.0.0.1", address.Host);
        Assert.True(Directory.Exists(dataDir));
        Assert.Contains(dataDir, server.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task CommandLineWinsOverEnvironment()
    {
        using var data = new TempFolder();
        var fromArgs = Path.Combine(data.Path, "from-args");
        using var server = ServerProcess.Start(
            $"--urls http://127.0.0.1:0 --data-dir \"{fromArgs}\"",
            new Dictionary<string, string> { ["JACKDAW_DATADIR"] = Path.Combine(data.Path, "from-env") });
        await server.WaitForAddressAsync(StartTimeout);
        Assert.True(Directory.Exists(fromArgs));
        Assert.False(Directory.Exists(Path.Combine(data.Path, "from-env")));
    }

    [Fact]
    public async Task BadConfigurationExitsWithAClearMessage()
    {
        using var data = new TempFolder();
        using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\" --max-body-size lots");
        Assert.Equal(2, await server.WaitForExitAsync(TimeSpan.FromSeconds(60)));
        Assert.Contains("MaxRequestBodySize 'lots'", server.Output, StringComparison.Ordinal);
    }
}

/// <summary>The command line as a newcomer meets it: help, mistakes, a port already taken.</summary>
public class CommandLineProcessTests
{
    private static readonly TimeSpan ExitTimeout = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData("--help")]
    [InlineData("-h")]
    [InlineData("--help --urls http://127.0.0.1:0")]
    [InlineData("--urls --help")]
    [InlineData("--port 9000 -h")]
    public async Task HelpPrintsEveryOptionWithItsDefaultAndCreatesNothing(string arguments)
    {
        using var folder = new TempFolder();
        using var process = ServerProcess.Start(arguments, workingDirectory: folder.Path);
        Assert.Equal(0, await process.WaitForExitAsync(ExitTimeout));
        var help = process.Output;
        string[] expected =
        [
            "--urls", "http://127.0.0.1:8080", "JACKDAW_URLS", "ASPNETCORE_URLS",
            "--data-dir", "./data", "JACKDAW_DATADIR",
            "--max-body-size", "268435456", "JACKDAW_MAXREQUESTBODYSIZE",
            "--public-url", "JACKDAW_PUBLICURL",
            "--Changes:QueueCapacity", "65536", "JACKDAW_CHANGES__QUEUECAPACITY",
            "--Changes:MaxCommandBytes", "JACKDAW_CHANGES__MAXCOMMANDBYTES",
            "--Changes:CloseGrace", "00:00:05", "JACKDAW_CHANGES__CLOSEGRACE",
            "--Changes:EventStreamHeartbeat", "00:00:15", "JACKDAW_CHANGES__EVENTSTREAMHEARTBEAT",
            "--Limits:MaxDocumentBodySize", "67108864 (64 MiB)", "JACKDAW_LIMITS__MAXDOCUMENTBODYSIZE",
            "--Limits:MaxConcurrentConnections", "10000", "--Limits:MinRequestBodyDataRate", "240",
            "--Limits:MaxQueryLimit", "1048576", "JACKDAW_LIMITS__MAXQUERYLIMIT",
            "--Logging:LogLevel:", "Logging__LogLevel__",
            "healthcheck", "--help",
        ];
        foreach (var text in expected)
        {
            Assert.Contains(text, help, StringComparison.Ordinal);
        }
        Assert.Empty(process.Error);
        Assert.Empty(Directory.EnumerateFileSystemEntries(folder.Path));
    }

    [Theory]
    [InlineData("--port 9000", "'--port'", "'--urls'")]
    [InlineData("--data-dr /tmp/x", "'--data-dr'", "'--data-dir'")]
    [InlineData("--max-body=1000", "'--max-body'", "'--max-body-size'")]
    [InlineData("--frobnicate", "'--frobnicate'", null)]
    public async Task UnknownOptionExitsWithOneLineNamingItAndTheNearest(string arguments, string named, string? suggested)
    {
        using var folder = new TempFolder();
        using var process = ServerProcess.Start(arguments, workingDirectory: folder.Path);
        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        var line = Assert.Single(Lines(process.Error));
        Assert.StartsWith($"jackdaw: unknown option {named}", line, StringComparison.Ordinal);
        if (suggested is null)
        {
            Assert.DoesNotContain("did you mean", line, StringComparison.Ordinal);
        }
        else
        {
            Assert.Contains($"did you mean {suggested}?", line, StringComparison.Ordinal);
        }
        Assert.Contains("jackdaw --help", line, StringComparison.Ordinal);
        Assert.Equal(process.Error, process.Output);
        Assert.Empty(Directory.EnumerateFileSystemEntries(folder.Path));
    }

    [Theory]
    [InlineData("--urls", "--urls needs a value")]
    [InlineData("--urls --data-dir /tmp/x", "--urls needs a value")]
    [InlineData("--data-dir=", "--data-dir needs a value")]
    [InlineData("serve", "unexpected argument 'serve'")]
    [InlineData("--urls http://127.0.0.1:0 http://127.0.0.1:1", "unexpected argument 'http://127.0.0.1:1'")]
    public async Task MissingValueOrStrayArgumentExitsWithOneLine(string arguments, string message)
    {
        using var folder = new TempFolder();
        using var process = ServerProcess.Start(arguments, workingDirectory: folder.Path);
        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        var line = Assert.Single(Lines(process.Error));
        Assert.StartsWith($"jackdaw: {message}", line, StringComparison.Ordinal);
        Assert.Empty(Directory.EnumerateFileSystemEntries(folder.Path));
    }

    [Theory]
    [InlineData("--max-body-size lots", "MaxRequestBodySize 'lots' is not a positive number of bytes")]
    [InlineData("--Limits:MaxQueryLimit=lots", "Limits:MaxQueryLimit 'lots' is not a positive whole number; set it with --Limits:MaxQueryLimit or JACKDAW_LIMITS__MAXQUERYLIMIT.")]
    [InlineData("--max-body-size 1000 --Limits:MaxBatchBodySize 2000", "Limits:MaxBatchBodySize '2000' is over MaxRequestBodySize (1,000)")]
    [InlineData("--urls localhost", "Urls 'localhost' is not an address to listen on")]
    [InlineData("--urls https://127.0.0.1:0", "Urls 'https://127.0.0.1:0' is https but no server certificate is given")]
    [InlineData("--data-dir a-file/data", "DataDir '{0}/a-file/data' cannot be made a folder")]
    [InlineData("--Logging:LogLevel:Jackdaw=Verbose", "Logging:LogLevel:Jackdaw 'Verbose' is not a log level")]
    public async Task BadValueExitsWithOneLineNamingIt(string arguments, string message)
    {
        using var folder = new TempFolder();
        File.WriteAllText(Path.Combine(folder.Path, "a-file"), string.Empty);
        using var process = ServerProcess.Start(arguments, workingDirectory: folder.Path);
        Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
        var line = Assert.Single(Lines(process.Error));
        Assert.StartsWith($"jackdaw: {string.Format(System.Globalization.CultureInfo.InvariantCulture, message, folder.Path)}", line, StringComparison.Ordinal);
        Assert.Equal(process.Error, process.Output);
    }

    [Theory]
    [InlineData("--urls=http://127.0.0.1:0 --DATA-DIR={0} --Changes:QueueCapacity=32 --Logging:LogLevel:Jackdaw=Information")]
    [InlineData("--urls http://127.0.0.1:0 --data-dir {0} --changes:queuecapacity 32 --Logging:LogLevel:Jackdaw Information")]
    public async Task OptionsTakeTheirValueAfterAnEqualsSignOrASpace(string arguments)
    {
        using var folder = new TempFolder();
        var dataDir = Path.Combine(folder.Path, "data here");
        using var process = ServerProcess.Start(string.Format(System.Globalization.CultureInfo.InvariantCulture, arguments, $"\"{dataDir}\""), workingDirectory: folder.Path);
        var address = await process.WaitForAddressAsync(TimeSpan.FromSeconds(60));
        Assert.Equal("127.0.0.1", address.Host);
        Assert.NotEqual(0, address.Port);
        Assert.True(Directory.Exists(dataDir));
        Assert.Contains($"data in {dataDir}", process.Output, StringComparison.Ordinal);
    }

    [Fact]
    public async Task AddressInUseExitsWithOneLineNamingItAndNoStackTrace()
    {
        using var folder = new TempFolder();
        var taken = new TcpListener(IPAddress.Loopback, 0);
        taken.Start();
        try
        {
            var port = ((IPEndPoint)taken.LocalEndpoint).Port;
            using var process = ServerProcess.Start($"--urls http://127.0.0.1:{port} --data-dir \"{folder.Path}\"");
            Assert.Equal(2, await process.WaitForExitAsync(ExitTimeout));
            var line = Assert.Single(Lines(process.Error));
            Assert.Equal($"jackdaw: 127.0.0.1:{port} is already in use; pass --urls http://127.0.0.1:PORT with a free PORT", line);
            Assert.DoesNotContain("   at ", process.Output, StringComparison.Ordinal);
            Assert.Equal(process.Error, process.Output);
        }
        finally
        {
            taken.Stop();
        }
    }

    [Fact]
    public async Task OtherStartupFailuresAreLoggedWholeAndExitWithOneLine()
    {
        using var folder = new TempFolder();
        // 192.0.2.1 is TEST-NET-1 (RFC 5737): never an address of this machine.
        using var process = ServerProcess.Start($"--urls http://192.0.2.1:8080 --Security:UnsecuredAccessAllowed PublicNetwork --data-dir \"{folder.Path}\"");
        Assert.Equal(1, await process.WaitForExitAsync(ExitTimeout));
        var line = Assert.Single(Lines(process.Error));
        Assert.StartsWith("jackdaw: failed to start: ", line, StringComparison.Ordinal);
        Assert.Contains("Hosting failed to start", process.Output, StringComparison.Ordinal);
        Assert.Contains("   at ", process.Output, StringComparison.Ordinal);
    }

    private static string[] Lines(string text) => text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
}
