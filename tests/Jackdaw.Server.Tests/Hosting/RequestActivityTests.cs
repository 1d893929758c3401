using System.Text.Json;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Hosting;

// Alone: OpenTelemetryExportTests' tracer provider listens to every "Jackdaw.Requests" source of
// the process, so a server of a parallel test would start the activity this class expects absent.
/// <summary>
/// ASP.NET Core's hosting makes a request activity and logging scope only when something can show
/// them (<see cref="RequestActivityLogFilter"/>): its request log lines, or scopes a provider writes.
/// </summary>
[Collection(RunsAlone.Name)]
public sealed class RequestActivityTests
{
    private static async Task<(bool Activity, bool Feature)> ProbeAsync(InProcessServer server)
    {
        using var response = await server.Client.GetAsync("/test/activity");
        response.EnsureSuccessStatusCode();
        var body = JsonDocument.Parse(await response.Content.ReadAsStringAsync()).RootElement;
        return (body.GetProperty("Activity").GetBoolean(), body.GetProperty("ActivityFeature").GetBoolean());
    }

    [Fact]
    public async Task ARequestUnderTheDefaultLevelsHasNoHostActivity()
    {
        await using var server = await InProcessServer.StartAsync();

        Assert.Equal((false, false), await ProbeAsync(server));
    }

    [Fact]
    public async Task TheHostsRequestLinesStillLogWhenAskedFor()
    {
        await using var server = await InProcessServer.StartAsync($"--Logging:LogLevel:{RequestActivityLogFilter.HostingCategory}=Information");

        Assert.Equal((true, true), await ProbeAsync(server));
        Assert.Contains(server.Logs.Records, r => r.Category == RequestActivityLogFilter.HostingCategory && r.Level == LogLevel.Information && r.Message.StartsWith("Request starting", StringComparison.Ordinal));
        Assert.Contains(server.Logs.Records, r => r.Category == RequestActivityLogFilter.HostingCategory && r.Message.StartsWith("Request finished", StringComparison.Ordinal));
    }

    [Fact]
    public async Task ScopesAskedForKeepTheHostActivity()
    {
        await using var server = await InProcessServer.StartAsync("--Logging:Console:FormatterOptions:IncludeScopes=true");

        Assert.Equal((true, true), await ProbeAsync(server));
    }

    [Fact]
    public void TheHostsCriticalRecordsAreWrittenAsBefore()
    {
        var provider = new CapturingLoggerProvider();
        using var factory = new RequestActivityLogFilter(LoggerFactory.Create(logging => logging.AddProvider(provider).SetMinimumLevel(LogLevel.Warning)), scopesWritten: false);
        var logger = factory.CreateLogger(RequestActivityLogFilter.HostingCategory);

        // What the host asks per request is false with Information off; the records themselves pass.
        Assert.False(logger.IsEnabled(LogLevel.Critical));
        Assert.True(logger.IsEnabled(LogLevel.Warning));
        Assert.True(logger.IsEnabled(LogLevel.Error));
        logger.LogCritical("Application startup exception");
        logger.LogWarning("Overriding HTTP_PORTS");
        Assert.Equal([LogLevel.Critical, LogLevel.Warning], provider.Records.Select(r => r.Level));
        Assert.True(factory.CreateLogger("Jackdaw.Requests").IsEnabled(LogLevel.Critical));
    }
}
