// DdbLocal127 starts AWS DynamoDB Local with the normal command-line arguments,
// but binds the Jetty connector to 127.0.0.1 instead of all interfaces (the
// stock CLI has no host flag). See shared/design/local-stack.md, section 1.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.*;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class DdbLocal127 {
  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer s = ServerRunner.createServerFromCommandLineArgs(args); // normal DynamoDB Local args
    Field f = DynamoDBProxyServer.class.getDeclaredField("server");
    f.setAccessible(true);
    for (Connector c : ((Server) f.get(s)).getConnectors()) ((ServerConnector) c).setHost("127.0.0.1");
    s.start();
  }
}
