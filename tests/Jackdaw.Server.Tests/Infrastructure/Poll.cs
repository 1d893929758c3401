namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>Waits for a condition, not for a time: the condition is asked again every few milliseconds until it holds or the timeout passes.</summary>
public static class Poll
{
    public static async Task UntilAsync(Func<Task<bool>> condition, TimeSpan timeout, string? what = null)
    {
        var deadline = DateTime.UtcNow + timeout;
        while (!await condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Waited {timeout.TotalSeconds:0} s for {what ?? "a condition"}, in vain.");
            }
            await Task.Delay(20);
        }
    }
}
