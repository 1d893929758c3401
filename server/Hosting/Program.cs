namespace Jackdaw.Server.Hosting;

public static class Program
{
    public static async Task<int> Main(string[] args)
    {
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
