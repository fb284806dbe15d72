/** Entry point of the web UI served at /ui/. */
import { render } from 'preact';
import { App } from './app.js';
import { installLinkInterceptor } from './lib/router.js';
import './styles.css';

installLinkInterceptor();
render(<App />, document.getElementById('app')!);
