namespace Jackdaw.Server.Hosting;

public static class Program
{
    public static async Task<int> Main(string[] args)
    {
        if (args is ["healthcheck", ..])
            return await HealthCheck.RunAsync(args.Length > 1 ? args[1] : "http://127.0.0.1:8080/build/version").ConfigureAwait(false);

        JackdawHost host;
        try
        {
            host = JackdawHost.Create(args);
        }
        catch (InvalidOperationException e)
        {
            await Console.Error.WriteLineAsync($"jackdaw: {e.Message}").ConfigureAwait(false);
            return 2;
        }
        await using (host.ConfigureAwait(false))
        {
            await host.StartAsync().ConfigureAwait(false);
            await host.WaitForShutdownAsync().ConfigureAwait(false);
        }
        return 0;
    }
}
