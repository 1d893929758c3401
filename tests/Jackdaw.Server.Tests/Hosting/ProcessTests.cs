using System.Net;
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
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);

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

public class HealthCheckTests
{
    [Fact]
    public async Task HealthCheckSucceedsAgainstARunningServerAndFailsWithoutOne()
    {
        using var data = new TempFolder();
        using var server = ServerProcess.Start($"--urls http://127.0.0.1:0 --data-dir \"{data.Path}\"");
        var address = await server.WaitForAddressAsync(TimeSpan.FromSeconds(60));

        using var healthy = ServerProcess.Start($"healthcheck {address}build/version");
        Assert.Equal(0, await healthy.WaitForExitAsync(TimeSpan.FromSeconds(60)));

        server.KillHard();
        await server.WaitForExitAsync(TimeSpan.FromSeconds(30));
        using var unhealthy = ServerProcess.Start($"healthcheck {address}build/version");
        Assert.Equal(1, await unhealthy.WaitForExitAsync(TimeSpan.FromSeconds(60)));
        Assert.Contains("unhealthy", unhealthy.Output, StringComparison.Ordinal);
    }
}
