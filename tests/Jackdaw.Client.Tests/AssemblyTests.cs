namespace Jackdaw.Client.Tests;

public class AssemblyTests
{
    [Fact]
    public void AssemblyNameIsJackdawClient() => Assert.Equal("Jackdaw.Client", typeof(Jackdaw.Client.ClientAssembly).Assembly.GetName().Name);
}
